"""Plain data shared by the engine, the summarizers and the services."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from app.core.content import Content

Role = Literal["user", "assistant", "system", "tool"]


@dataclass(frozen=True, slots=True)
class Message:
    """A validated message exactly as the client posted it (Anthropic or OpenAI shape).

    `tokens` is the count stored at append time (content + per-message overhead).
    Stateless routes build these with id = str(index) and seq = index + 1.
    """

    id: str
    seq: int
    role: Role
    content: Content
    tokens: int
    name: str | None = None
    tool_calls: Sequence[Mapping[str, Any]] | None = None  # OpenAI assistant tool calls
    tool_call_id: str | None = None  # OpenAI role=tool result
    metadata: Mapping[str, Any] = field(default_factory=dict)
    overhead: int | None = None
    """Tokens beyond the body (framing, role, name, tool traffic), set only where `tokens` is
    a floor rather than the count (app/engine/newest.py); `units.rebuild` uses it
    to count a changed body exactly without counting the original one."""

    call_ids: tuple[str, ...] = field(init=False, repr=False, compare=False)
    """Ids of the tool calls this message makes (OpenAI tool_calls or Anthropic tool_use)."""
    result_ids: tuple[str, ...] = field(init=False, repr=False, compare=False)
    """Ids of the tool calls this message answers (OpenAI tool_call_id or tool_result)."""

    def __post_init__(self) -> None:
        # Computed once: grouping, pruning and validation ask for them many times per message.
        if self.tool_calls is None and self.tool_call_id is None and type(self.content) is str:
            object.__setattr__(self, "call_ids", ())  # most messages: plain text
            object.__setattr__(self, "result_ids", ())
            return
        object.__setattr__(self, "call_ids", call_ids_of(self.content, self.tool_calls))
        object.__setattr__(self, "result_ids", result_ids_of(self.content, self.tool_call_id))

    def counted(self, tokens: int, overhead: int | None = None) -> Message:
        """This message with another count: `dataclasses.replace` without deriving the ids
        again (the counting paths make a copy per message, and replace costs twice this)."""
        copy = object.__new__(Message)
        set_ = object.__setattr__
        set_(copy, "id", self.id)
        set_(copy, "seq", self.seq)
        set_(copy, "role", self.role)
        set_(copy, "content", self.content)
        set_(copy, "tokens", tokens)
        set_(copy, "name", self.name)
        set_(copy, "tool_calls", self.tool_calls)
        set_(copy, "tool_call_id", self.tool_call_id)
        set_(copy, "metadata", self.metadata)
        set_(copy, "overhead", overhead)
        set_(copy, "call_ids", self.call_ids)
        set_(copy, "result_ids", self.result_ids)
        return copy


def call_ids_of(content: Any, tool_calls: Sequence[Mapping[str, Any]] | None) -> tuple[str, ...]:
    """The one rule for the tool calls a message makes: its Chat `tool_calls` and its
    `tool_use` blocks (Anthropic, and Gemini's function calls as stored), in that order."""
    ids = [str(call["id"]) for call in tool_calls or () if call.get("id")]
    return (*ids, *_block_ids(content, "tool_use", "id"))


def result_ids_of(content: Any, tool_call_id: str | None) -> tuple[str, ...]:
    """The one rule for the tool calls a message answers: a Chat `tool_call_id` and its
    `tool_result` blocks."""
    ids = [tool_call_id] if tool_call_id else []
    return (*ids, *_block_ids(content, "tool_result", "tool_use_id"))


def _block_ids(content: Any, kind: str, key: str) -> list[str]:
    if not isinstance(content, list):
        return []
    return [
        str(b[key])
        for b in content
        if isinstance(b, Mapping) and b.get("type") == kind and key in b
    ]
