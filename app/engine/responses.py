"""`format=openai_responses`: the kept messages as OpenAI Responses API input items, and the
check that the items are what the Responses API accepts (docs/reference.md §Message shapes).

Works on render.py's entries (role, Anthropic-style blocks, source), tool results already
right after the assistant entry that made their calls:

- an assistant entry → in block order (as posted: reasoning and text in `content`, then
  the calls): each `reasoning` item byte-for-byte, one assistant `message` item per run
  of text (`_assistant_message`: shapes the official `openai` types accept), one
  `function_call` item per call (`arguments` as stored, else the input as JSON text). A
  reasoning item with nothing after it is left out (the API rejects a reasoning item
  without the item it precedes), so a turn of nothing but reasoning goes whole. An item
  posted with an `id` / `status` gets them back (items.py keeps them), so the API can pair
  a reasoning item with the items it stored after it. One stored message may become
  several items (a shape-forced exception to one output message per stored message;
  `messages_included` still counts stored messages);
- a user entry → one `function_call_output` item per tool result (its text, or
  EMPTY_RESULT_TEXT), then one user `message` item (`input_text` / `input_image` /
  `input_file` parts), or the easy form `{"role": "user", "content": "…"}` for a message
  posted with a string (so a host that compares what it stored with what it gets back, as
  the Agents SDK's compaction session does, finds it unchanged).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from app.core.content import Block
from app.engine.compaction import COMPACTION, is_opaque
from app.engine.entries import (
    DROPPED_IN_RESPONSES,
    EMPTY_RESULT_TEXT,
    INTERNAL_ARGUMENTS,
    INTERNAL_ITEM,
    INTERNAL_STRING,
    REASONING,
    Entry,
    as_entry,
)
from app.engine.parts import placeholder, to_responses
from app.engine.text import block_text, content_text
from app.engine.types import Message

Item = dict[str, Any]
ASSISTANT_SIDE = frozenset({REASONING, COMPACTION, "function_call"})


def to_items(entries: list[Entry]) -> list[tuple[Item, str]]:
    out: list[tuple[Item, str]] = []
    for role, blocks, source in entries:
        items = _assistant(blocks) if role == "assistant" else _user(blocks)
        out += [(item, source) for item in items]
    return out


def message_items(message: Message) -> list[Item]:
    """One stored message on its own as items (DELETE …/messages/last): no relocation of
    results, no summary, blocks the format cannot carry dropped."""
    role, blocks, _ = as_entry(message)
    kept = [b for b in blocks if b.get("type") not in DROPPED_IN_RESPONSES]
    return _assistant(kept) if role == "assistant" else _user(kept)


def _message(role: str, parts: list[dict[str, Any]]) -> Item:
    return {"type": "message", "role": role, "content": parts}


def _assistant(blocks: list[Block]) -> list[Item]:
    items: list[Item] = []
    texts: list[str] = []
    posted: dict[str, Any] = {}  # id / status of the message item the texts came from

    def close_text() -> None:
        nonlocal posted
        if texts:
            items.append(_assistant_message(texts, posted))
            texts.clear()
        posted = {}

    for block in blocks:
        kind = block.get("type")
        if kind == REASONING or is_opaque(block):  # opaque items go back byte for byte
            close_text()
            items.append(dict(block))
        elif kind == "tool_use":
            close_text()
            arguments = block.get(INTERNAL_ARGUMENTS) or json.dumps(
                block.get("input", {}), ensure_ascii=False
            )
            call = {"type": "function_call", "call_id": block.get("id")}
            call |= {"name": block.get("name", ""), "arguments": arguments}
            items.append({**call, **block.get(INTERNAL_ITEM, {})})
        elif (text := block_text(block)).strip():
            if INTERNAL_ITEM in block:  # the first text of a posted message item
                close_text()
                posted = dict(block[INTERNAL_ITEM])
            texts.append(text)
    close_text()
    # A reasoning item is only valid before the item it precedes: trailing ones (their calls
    # left out as unanswered) go, and a turn of nothing but reasoning goes whole.
    while items and items[-1].get("type") == REASONING:
        items.pop()
    return items


def _assistant_message(texts: list[str], posted: Mapping[str, Any]) -> Item:
    """An output message (`id`, `status`, `output_text` parts with `annotations`) when the item
    was posted with an id. Otherwise the easy form, its texts joined into one string as the
    Chat format joins them: the one assistant message the Responses API takes without an id
    (an invented id would name an item no backend stored)."""
    if "id" not in posted:
        return {"type": "message", "role": "assistant", "content": "\n".join(texts)}
    parts = [{"type": "output_text", "text": t, "annotations": []} for t in texts]
    return {**_message("assistant", parts), "status": "completed", **posted}


def _user(blocks: list[Block]) -> list[Item]:
    items: list[Item] = []
    for block in blocks:
        if block.get("type") == "tool_result":
            text = content_text(block.get("content", ""))
            output = text if text.strip() else EMPTY_RESULT_TEXT
            call = {"type": "function_call_output", "call_id": block.get("tool_use_id")}
            items.append({**call, "output": output, **block.get(INTERNAL_ITEM, {})})
    rest = [b for b in blocks if b.get("type") != "tool_result"]
    if len(rest) == 1 and rest[0].get(INTERNAL_STRING):  # posted as a string: the easy form
        items.append({"role": "user", "content": str(rest[0].get("text", ""))})
    elif rest:
        items.append(_message("user", [_input_part(b) for b in rest]))
    return items


def _input_part(block: Block) -> dict[str, Any]:
    return to_responses(block) or placeholder(block, "input_text")


def validate_responses(items: Sequence[Mapping[str, Any]]) -> list[str]:
    """What the Responses API would reject: unknown items, empty messages, a reasoning item
    not followed by an assistant item, an output without its call, a call left unanswered
    before the conversation moves on (except the newest, pending one)."""
    problems: list[str] = []
    calls = _CallLedger()
    for index, item in enumerate(items):
        kind = item.get("type", "message" if "role" in item else None)  # the easy form
        if kind == "function_call_output":
            problems += calls.answer(index, item)
            continue
        assistant_side = kind in ASSISTANT_SIDE or (
            kind == "message" and item.get("role") == "assistant"
        )
        problems += calls.move_on(index, assistant_side)
        if kind == "function_call":
            problems += calls.issue(index, item)
        elif kind == REASONING:
            problems += _reasoning_problems(index, items)
        elif kind == "message":
            problems += _message_problems(index, item)
        elif kind == COMPACTION:
            if not (isinstance(item.get("encrypted_content"), str) and item["encrypted_content"]):
                problems.append(f"item {index}: compaction without its encrypted_content")
        else:
            problems.append(f"item {index}: type {kind!r} not allowed")
    return problems  # calls still open at the end: the newest, pending call


class _CallLedger:
    """The Responses API's pairing rule: each call issued once, answered by one output, and
    answered before the conversation moves on (an output or a user-side item)."""

    def __init__(self) -> None:
        self.issued: set[str] = set()
        self.open: set[str] = set()
        self.after_output = False

    def issue(self, index: int, item: Mapping[str, Any]) -> list[str]:
        call = str(item.get("call_id"))
        problems = [f"item {index}: call id {call} issued twice"] if call in self.issued else []
        if not isinstance(item.get("arguments"), str):
            problems.append(f"item {index}: arguments is not a string")
        self.issued.add(call)
        self.open.add(call)
        return problems

    def answer(self, index: int, item: Mapping[str, Any]) -> list[str]:
        call = str(item.get("call_id"))
        problems = [] if call in self.open else [f"item {index}: output {call} without its call"]
        if not isinstance(item.get("output"), str):
            problems.append(f"item {index}: output is not a string")
        self.open.discard(call)
        self.after_output = True
        return problems

    def move_on(self, index: int, assistant_side: bool) -> list[str]:
        problems = []
        if self.open and (self.after_output or not assistant_side):
            problems.append(f"item {index}: calls {sorted(self.open)} not answered")
            self.open = set()
        self.after_output = False
        return problems


def _reasoning_problems(index: int, items: Sequence[Mapping[str, Any]]) -> list[str]:
    following = items[index + 1] if index + 1 < len(items) else {}
    if following.get("type") not in ("function_call", "message", REASONING) or (
        following.get("role", "assistant") != "assistant"
    ):
        return [f"item {index}: reasoning not followed by its message or call"]
    return []


def _message_problems(index: int, item: Mapping[str, Any]) -> list[str]:
    role = item.get("role")
    user_parts = {"input_text", "input_image", "input_file"}
    allowed = {"user": user_parts, "assistant": {"output_text"}}.get(str(role))
    if allowed is None:
        return [f"item {index}: message role {role!r} not allowed"]
    content = item.get("content")
    if isinstance(content, str):  # the easy form
        return [] if content.strip() else [f"item {index}: empty message"]
    if not isinstance(content, list) or not content:
        return [f"item {index}: empty message"]
    problems = []
    for part in content:
        kind = part.get("type") if isinstance(part, Mapping) else None
        if kind not in allowed:
            problems.append(f"item {index}: part {kind!r} not allowed in a {role} message")
        elif kind == "input_text" and not str(part.get("text", "")).strip():
            problems.append(f"item {index}: empty text part")
    return problems
