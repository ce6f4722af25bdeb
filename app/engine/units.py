"""Atomic units: the pieces a context is cut into, so cuts only fall on turn boundaries.

A unit is a plain message, or an assistant message with tool calls together with every message
carrying its results (parallel calls as one unit, matched by id even when the results are not
adjacent; whatever lies between a call and its last result belongs to the same unit).

Repairs, so no provider ever sees a dangling id:
- an *orphan* result (its call is not visible: folded into an earlier summary, before the clear
  marker, or never made) is removed; a message left empty by that is dropped;
- a call without a result is removed from its message, except in the newest message, where it
  is the *pending* call the client is about to answer (that unit is `pending`);
- an empty message (no text, no blocks worth sending) is dropped.
Repaired messages are new `Message`s with re-counted tokens; the input is never altered.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Sequence
from dataclasses import dataclass, field

from app.core.content import Block, Content
from app.engine.types import Message
from app.tokens.base import TokenCounter
from app.tokens.media.blocks import has_media


def body_tokens(message: Message, counter: TokenCounter) -> int:
    """Tokens of what a message carries: its content plus OpenAI tool calls."""
    tokens = counter.count_content(message.content)
    for call in message.tool_calls or ():
        tokens += counter.count_text(json.dumps(call, ensure_ascii=False, sort_keys=True))
    return tokens


def media_recounted(messages: Sequence[Message], counter: TokenCounter) -> tuple[Message, ...]:
    """`messages`, those that carry media counted again by `counter`. Stored counts follow
    the media rule of the session's model; a context for a model that bills media another way
    counts them by its own rule (text is not counted again: calibration absorbs the small
    differences between encodings)."""
    return tuple(
        m.counted(counter.count_message(m)) if has_media(m.content) else m for m in messages
    )


def rebuild(
    original: Message,
    counter: TokenCounter,
    content: Content,
    tool_calls: Sequence[dict[str, object]] | None = None,
) -> Message:
    """A copy of `original` with a new body; tokens = original overhead + new body tokens."""
    overhead = original.overhead
    if overhead is None:
        overhead = max(0, original.tokens - body_tokens(original, counter))
    changed = dataclasses.replace(
        original, content=content, tool_calls=tool_calls if tool_calls else None
    )
    return changed.counted(overhead + body_tokens(changed, counter), changed.overhead)


def is_empty(message: Message) -> bool:
    """True when the message has nothing a provider would accept as content."""
    if message.call_ids or message.result_ids:
        return False
    if isinstance(message.content, str):
        return not message.content.strip()
    return all(
        block.get("type") == "text" and not str(block.get("text", "")).strip()
        for block in message.content
    )


@dataclass(frozen=True, slots=True)
class Unit:
    messages: tuple[Message, ...]
    pending: bool = False

    @property
    def tokens(self) -> int:
        return sum(m.tokens for m in self.messages)


@dataclass(slots=True)
class Grouping:
    units: list[Unit]
    dropped: dict[str, str] = field(default_factory=dict)
    """Message id → why it is not sent (orphan result, unanswered call, empty)."""
    repaired: set[str] = field(default_factory=set)
    """Ids of messages sent with some blocks removed."""


def _without_results(message: Message, ids: set[str], counter: TokenCounter) -> Message | None:
    if message.tool_call_id in ids:
        return None
    content = message.content
    if isinstance(content, str):
        return message
    kept: list[Block] = [
        b
        for b in content
        if not (b.get("type") == "tool_result" and str(b.get("tool_use_id")) in ids)
    ]
    if len(kept) == len(content):
        return message
    repaired = rebuild(message, counter, kept, _dicts(message.tool_calls))
    return None if is_empty(repaired) else repaired


def _without_calls(message: Message, ids: set[str], counter: TokenCounter) -> Message | None:
    calls = [dict(c) for c in message.tool_calls or () if str(c.get("id")) not in ids]
    content = message.content
    if isinstance(content, list):
        content = [
            b for b in content if not (b.get("type") == "tool_use" and str(b.get("id")) in ids)
        ]
    repaired = rebuild(message, counter, content, calls)
    return None if is_empty(repaired) else repaired


def _dicts(calls: Sequence[object] | None) -> list[dict[str, object]] | None:
    return [dict(c) for c in calls] if calls else None  # type: ignore[call-overload]


def group_units(
    messages: Sequence[Message], counter: TokenCounter, *, pending_allowed: bool = True
) -> Grouping:
    """Repair dangling ids, then split `messages` (seq order) into units. With
    `pending_allowed`, the newest message may keep calls still waiting for their results."""
    grouping = Grouping(units=[])
    kept, answered = _drop_orphan_results(messages, counter, grouping)
    final = _strip_unanswered(kept, answered, counter, grouping, pending_allowed)
    result_position = {m_id: pos for pos, m in enumerate(final) for m_id in m.result_ids}
    current: list[Message] = []
    span_end = -1
    for position, message in enumerate(final):
        if current and position > span_end:
            grouping.units.append(Unit(tuple(current)))
            current = []
        current.append(message)
        ends = [result_position.get(c, position) for c in message.call_ids]
        span_end = max([span_end, position, *ends])
    if current:
        pending = any(c not in answered for c in current[-1].call_ids)
        grouping.units.append(Unit(tuple(current), pending=pending))
    return grouping


def _drop_orphan_results(
    messages: Sequence[Message], counter: TokenCounter, grouping: Grouping
) -> tuple[list[Message], dict[str, int]]:
    """The messages without results whose call is not earlier (or already answered), and
    where each call is answered."""
    issued: dict[str, int] = {}
    for index, message in enumerate(messages):
        for call_id in message.call_ids:
            issued.setdefault(call_id, index)
    answered: dict[str, int] = {}
    kept: list[Message] = []
    for index, message in enumerate(messages):
        orphans = set()
        for result_id in message.result_ids:
            if issued.get(result_id, index) < index and result_id not in answered:
                answered[result_id] = index
            else:
                orphans.add(result_id)
        repaired = _without_results(message, orphans, counter) if orphans else message
        if repaired is None or is_empty(repaired):
            grouping.dropped[message.id] = "orphan tool result" if orphans else "empty message"
            continue
        if repaired is not message:
            grouping.repaired.add(message.id)
        kept.append(repaired)
    return kept, answered


def _strip_unanswered(
    kept: list[Message],
    answered: dict[str, int],
    counter: TokenCounter,
    grouping: Grouping,
    pending_allowed: bool,
) -> list[Message]:
    """Unanswered calls are allowed only in the newest message (the pending call)."""
    final: list[Message] = []
    for position, message in enumerate(kept):
        unanswered = {c for c in message.call_ids if c not in answered}
        if unanswered and (position < len(kept) - 1 or not pending_allowed):
            stripped = _without_calls(message, unanswered, counter)
            if stripped is None:
                grouping.dropped[message.id] = "tool call without a result"
                continue
            grouping.repaired.add(message.id)
            message = stripped
        final.append(message)
    return final


def is_user_turn(message: Message) -> bool:
    """A message the user typed (not a carrier of tool results)."""
    return message.role == "user" and not message.result_ids and not is_empty(message)


def first_user_message(messages: Sequence[Message]) -> Message | None:
    """The pinned-message candidate: the first user turn (the task), in seq order."""
    return next((m for m in messages if is_user_turn(m)), None)


def newest_user_unit(units: Sequence[Unit]) -> int | None:
    """Index of the last unit holding a user turn, or None."""
    found = None
    for index, unit in enumerate(units):
        if any(is_user_turn(m) for m in unit.messages):
            found = index
    return found
