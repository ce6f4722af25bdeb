"""Messages: every string a summarizer reads (text, tool input, tool results, OpenAI arguments),
redacted before it reads them. Ids, names and types stay as they are; stored messages are
never touched (these are copies).

Texts that may be one output cut in pieces are redacted joined (`redact_joined`): adjacent
tool results (one message's blocks, or the next message of the same role when nothing else
comes between: OpenAI's `role: tool` messages, results sent one user message each), and
adjacent text blocks. Each piece keeps its own text, redacted.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from typing import Any, NamedTuple

from app.engine.types import Message
from app.summarizers.redact.rules import redact_joined


class Spot(NamedTuple):
    """Where a string sits: the kind of piece that may continue another ("result", "text", or
    "" for any other string), its message's position and role, and its top-level block's
    position among the message's `blocks`."""

    kind: str
    message: int
    role: str
    block: int
    blocks: int

    def continues(self, before: Spot) -> bool:
        """This string continues the output that `before` is part of."""
        if not self.kind or self.kind != before.kind or self.role != before.role:
            return False
        if self.message == before.message:
            return self.block - before.block in (0, 1)
        last = before.block == before.blocks - 1
        return self.message == before.message + 1 and last and self.block == 0


TextMap = Callable[[str, Spot], str]


def redact_messages(messages: Sequence[Message]) -> list[Message]:
    """Copies of `messages` with every secret replaced (a message without any is returned as is).
    Pieces of one output are redacted as one text (`redact_joined`)."""
    slots: list[tuple[str, Spot]] = []

    def collect(text: str, spot: Spot) -> str:
        slots.append((text, spot))
        return text

    for index, message in enumerate(messages):
        _map_message(message, index, collect)
    answers = iter(_redact_slots(slots))
    return [_map_message(m, i, lambda _t, _s: next(answers)) for i, m in enumerate(messages)]


def map_texts(message: Message, fn: Callable[[str], str]) -> Message:
    """`message` with `fn` applied to every string a summarizer reads (as `redact_messages`
    walks them: ids and types untouched)."""
    return _map_message(message, 0, lambda text, _spot: fn(text))


def _redact_slots(slots: Sequence[tuple[str, Spot]]) -> list[str]:
    out: list[str] = []
    index = 0
    while index < len(slots):
        end = index + 1
        while end < len(slots) and slots[end][1].continues(slots[end - 1][1]):
            end += 1
        out += redact_joined([text for text, _ in slots[index:end]])
        index = end
    return out


def _map_message(message: Message, index: int, fn: TextMap) -> Message:
    role = message.role
    content = message.content
    if isinstance(content, list):
        blocks = len(content)
        mapped = [
            _map_block(b, fn, Spot(_kind(b, role), index, role, at, blocks))
            if isinstance(b, dict)
            else b
            for at, b in enumerate(content)
        ]
        content = content if _same(mapped, content) else mapped
    elif isinstance(content, str):
        content = fn(content, Spot("result" if role == "tool" else "text", index, role, 0, 1))
    calls = None
    if message.tool_calls:
        spot = Spot("", index, role, -1, 0)
        calls = [_map_call(call, fn, spot) for call in message.tool_calls]
    if content is message.content and (calls is None or _same(calls, message.tool_calls)):
        return message
    return replace(message, content=content, tool_calls=calls or message.tool_calls)


def _kind(block: Mapping[str, Any], role: str) -> str:
    kind = block.get("type")
    if kind == "tool_result" or role == "tool":
        return "result"
    return "text" if kind == "text" else ""


_STRUCTURAL_KEYS = frozenset(
    {"type", "id", "tool_use_id", "call_id", "name", "signature", "source", "cache_control",
     "media_type", "data", "image_url"}
)  # fmt: skip


def _map_block(block: dict[str, Any], fn: TextMap, spot: Spot) -> dict[str, Any]:
    """A content block: its own fields except the structural ones (ids, types, an image's
    `source`); below them (a tool's `input`, a result's `content`) every string."""
    if block.get("type") == "tool_result":
        inner = _map_content(block.get("content", ""), fn, spot)
        return block if inner is block.get("content", "") else {**block, "content": inner}
    mapped = {k: v if k in _STRUCTURAL_KEYS else _map_value(v, fn, spot) for k, v in block.items()}
    return block if _same(list(mapped.values()), list(block.values())) else mapped


def _map_content(content: Any, fn: TextMap, spot: Spot) -> Any:
    """A tool result's content: a string, or a list of blocks."""
    if isinstance(content, str):
        return fn(content, spot)
    if not isinstance(content, list):
        return content
    blocks = [_map_block(b, fn, spot) if isinstance(b, dict) else b for b in content]
    return content if _same(blocks, content) else blocks


def _map_value(value: Any, fn: TextMap, spot: Spot) -> Any:
    """Every string inside `value` through `fn` (keys stay)."""
    if isinstance(value, str):
        return fn(value, spot)
    if isinstance(value, list):
        items = [_map_value(v, fn, spot) for v in value]
        return value if _same(items, value) else items
    if isinstance(value, dict):
        mapped = {k: _map_value(v, fn, spot) for k, v in value.items()}
        return value if _same(list(mapped.values()), list(value.values())) else mapped
    return value


def _map_call(call: Mapping[str, Any], fn: TextMap, spot: Spot) -> Mapping[str, Any]:
    """An OpenAI tool call: its `arguments` (a JSON string, or an object some clients send)."""
    function = call.get("function")
    if not isinstance(function, dict) or "arguments" not in function:
        return call
    arguments = _map_value(function["arguments"], fn, spot)
    if arguments is function["arguments"]:
        return call
    return {**call, "function": {**function, "arguments": arguments}}


def _same(new: Sequence[Any] | None, old: Sequence[Any] | None) -> bool:
    if new is None or old is None:
        return new is old
    return len(new) == len(old) and all(a is b for a, b in zip(new, old, strict=True))
