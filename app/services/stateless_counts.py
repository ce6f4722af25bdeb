"""Counting a posted history newest → oldest, only as far as it can matter.

POST /assemble-context gets the whole history every time and nothing is stored, so every
message used to be encoded before the engine ran, though a 16k budget sends the newest few
percent of a 124k-token history. Here the newest messages are counted exactly until two
windows are full, and older ones are left at 0 tokens:

- window A, the newest messages whose lowest possible cost exceeds the limit: a kept unit
  is a suffix of the history, so nothing older than A can be sent;
- window B, the messages before A, again over the limit at their lowest cost: at every step
  of the engine's prune replay over A (app/engine/fit.py `prune`) the running total is then
  over the limit and over the prune target whatever the older counts are, so every eligible
  message is pruned there exactly as with all counts known; and the drop loop (`fit`) drops
  every unit holding an uncounted message, since that unit and all after it hold A and B.

A message's lowest possible cost is its count, or its pruned count when it can be pruned,
and 0 when the engine might rewrite it before counting (a mid-history system message, an
orphan tool result, a call without its result, an empty message). The pinned first user
message is always counted. `explain` needs every count, so it counts all; and the service
checks that no uncounted message was sent (else it counts all and assembles again).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from app.engine.items import normalize_posted, refuse_unmatched, unmatched_outputs
from app.engine.prune import prune_message
from app.engine.types import Message
from app.engine.units import first_user_message, is_empty
from app.tokens.counter import TiktokenCounter


def parse_messages(raw_messages: Sequence[Mapping[str, Any]]) -> list[Message]:
    """Validate (InvalidMessage → 422) and number posted messages; tokens not counted yet.
    A message's id is the index of its first posted entry (Responses items are grouped)."""
    entries = normalize_posted(raw_messages)
    refuse_unmatched(raw_messages, unmatched_outputs(entries))  # no session to look in
    messages = []
    for position, posted in enumerate(entries):
        normalized = posted.message
        messages.append(
            Message(
                id=str(posted.indexes[0]),
                seq=position + 1,
                role=normalized.role,
                content=normalized.content,
                tokens=0,
                name=normalized.name,
                tool_calls=normalized.tool_calls,
                tool_call_id=normalized.tool_call_id,
                metadata=normalized.metadata,
            )
        )
    return messages


def count_all(messages: Sequence[Message], counter: TiktokenCounter) -> list[Message]:
    return [dataclasses.replace(m, tokens=counter.count_message(m)) for m in messages]


@dataclass(frozen=True, slots=True)
class _Links:
    """Tool call and result ids per message, and where each call id is first issued."""

    calls: list[tuple[str, ...]]
    results: list[tuple[str, ...]]
    issued: dict[str, int]

    @classmethod
    def of(cls, messages: Sequence[Message]) -> _Links:
        calls = [m.call_ids for m in messages]
        issued: dict[str, int] = {}
        for index, ids in enumerate(calls):
            for call_id in ids:
                issued.setdefault(call_id, index)
        return cls(calls, [m.result_ids for m in messages], issued)


def _rewritable(messages: Sequence[Message], links: _Links, keep_system: bool) -> set[int]:
    """Indexes of messages the engine may rewrite (cheaper) before counting them: the
    conditions of `group_units` (app/engine/units.py) and `as_user_note`, conservatively."""
    issued = links.issued
    answered: dict[str, int] = {}
    rewritable: set[int] = set()
    for index, message in enumerate(messages):
        results = links.results[index]
        if (message.role == "system" and not keep_system) or (
            not results and not links.calls[index] and is_empty(message)
        ):
            rewritable.add(index)
        for result_id in results:
            if issued.get(result_id, index) < index and result_id not in answered:
                answered[result_id] = index
            else:
                rewritable.add(index)
    for index, calls in enumerate(links.calls):
        if any(issued[c] != index or answered.get(c, -1) <= index for c in calls):
            rewritable.add(index)
    return rewritable


def _protected_start(links: _Links, keep_recent: int, skipped: set[int]) -> int:
    """An index no later than the first message of the units holding the last `keep_recent`
    unit messages (and the last unit): the units the engine drops last (`fold_bounds`), so
    they are always counted. Messages in `skipped` may not be in any unit (the pinned one,
    or one the engine leaves out), so they do not count towards `keep_recent`; and a unit
    reaches back to the calls its results answer."""
    start, recent = len(links.calls), 0
    while start > 0 and (recent < max(keep_recent, 1)):
        start -= 1
        recent += start not in skipped
    index = len(links.calls)
    while index > start:
        index -= 1
        for result_id in links.results[index]:
            start = min(start, links.issued.get(result_id, start))
    return start


def _lowest_cost(message: Message, counter: TiktokenCounter) -> int:
    pruned = prune_message(message, counter)
    return message.tokens if pruned is None else min(message.tokens, pruned.tokens)


def count_newest(
    messages: Sequence[Message],
    counter: TiktokenCounter,
    *,
    limit: int,
    pin_first: bool,
    keep_system: bool,
    keep_recent: int,
) -> tuple[list[Message], frozenset[str]]:
    """`messages` with the counts that can matter under `limit` (see the module docstring),
    and the ids of those left uncounted (at 0)."""
    counted = list(messages)
    links = _Links.of(messages)
    rewritable = _rewritable(messages, links, keep_system)
    pinned = first_user_message(messages) if pin_first else None
    if pinned is not None:  # kept apart from the units, and maybe left out: no lower bound
        rewritable.add(int(pinned.id))
    protected = _protected_start(links, keep_recent, rewritable)
    windows_left, window_cost, index = 2, 0, len(counted)
    while index > protected or (index > 0 and windows_left):
        index -= 1
        message = dataclasses.replace(counted[index], tokens=counter.count_message(counted[index]))
        counted[index] = message
        window_cost += 0 if index in rewritable else _lowest_cost(message, counter)
        if window_cost > limit and windows_left:
            windows_left, window_cost = windows_left - 1, 0
    uncounted = counted[:index] if not windows_left else []
    if pinned is not None and int(pinned.id) < index:
        position = int(pinned.id)
        counted[position] = dataclasses.replace(pinned, tokens=counter.count_message(pinned))
        uncounted = [m for m in uncounted if m.id != pinned.id]
    return counted, frozenset(m.id for m in uncounted)


__all__ = ["count_all", "count_newest", "parse_messages"]
