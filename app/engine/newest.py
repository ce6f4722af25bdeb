"""Counting a posted history newest → oldest, and handing the engine only what can matter.

POST /assemble-context gets the whole history every time and nothing is stored, so every
message used to be encoded and assembled, though a 16k budget sends the newest few percent
of a 171k-token history. Here, newest first:

- the sendable window: the newest messages whose lowest possible cost exceeds the limit
  (and at least the units the engine drops last): a kept unit is a suffix of the history,
  so nothing older than it can be sent. Counted exactly, but for a message the engine is
  sure to prune whose excerpt is under a lower bound of its count (app/tokens/lower_bound.py:
  words, not tokens): its long text is never encoded;
- the cut: the last unit boundary at or before the sendable window that the engine sees
  the same way with or without the older messages (no tool id used on both sides of it,
  nothing older that the engine's repairs would rewrite or drop with a warning, and the
  newest user turn after it). The engine is handed the history from the cut on, and the
  pinned message; messages between the cut and the sendable window carry 0 (`stand_ins`,
  left unpruned by the engine);
- nothing older: the engine's prune replay (app/engine/prune.py `prune_history`) ends, with
  or without the older history, by pruning every message eligible at the last step, since
  the sendable window alone keeps the running total over the limit and the prune target
  however much it prunes; and its drop loop (app/engine/fit.py) drops everything older than
  that window for the same reason. So the messages before the cut are reported dropped, and
  their units counted in the engine's drop warning (`left_out_units`), without the engine
  or their counts.

A message's lowest possible cost is its count, or its pruned count when it can be pruned,
and 0 when the engine might rewrite it before counting (a mid-history system message, an
orphan tool result, a call without its result, an empty message). The pinned first user
message is always counted. When the whole history may be sent, or `explain`
needs every count, every message is counted and handed over; and `assemble_newest` checks that
every stand-in was dropped and every floored message pruned or dropped (else it counts all
and assembles again).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass

from app.core.errors import BudgetTooSmall
from app.engine.assemble import AssemblyInput, AssemblyResult, assemble
from app.engine.budget import compute_budget, estimate_limit
from app.engine.compaction import compaction_floor
from app.engine.prune import excerpted, has_bulky_text
from app.engine.state import Handed
from app.engine.types import Message
from app.engine.units import body_tokens, first_user_message, is_empty, is_user_turn
from app.engine.validate import ContextInvariantError
from app.tokens.counter import TiktokenCounter
from app.tokens.lower_bound import LowerBoundCounter, lower_bound_counter


def count_all(messages: Sequence[Message], counter: TiktokenCounter) -> list[Message]:
    return [m.counted(counter.count_message(m)) for m in messages]


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


@dataclass(frozen=True, slots=True)
class NewestCounts:
    """Posted messages with the counts that can matter under a limit (see the module)."""

    messages: list[Message]
    """What the engine is handed: the history from the cut on, and the pinned message."""
    stand_ins: frozenset[str]
    """Ids handed with tokens 0 (between the cut and the sendable window): the engine must
    drop them."""
    floored: frozenset[str] = frozenset()
    """Ids whose tokens is a lower bound over their excerpt's exact count (the sendable
    window): the engine must prune them (or drop them)."""
    left_out: tuple[str, ...] = ()
    """Ids of the messages before the cut (not the pinned one): dropped without the engine."""
    left_out_units: int = 0
    """How many units the engine would have made of them."""


def count_newest(
    messages: Sequence[Message],
    counter: TiktokenCounter,
    *,
    limit: int,
    pin_first: bool,
    keep_system: bool,
    keep_recent: int,
) -> NewestCounts:
    """`messages` counted newest → oldest as far as `limit` can reach (the module docstring);
    every message counted and handed over when the whole history may be sent."""
    counted = list(messages)
    links = _Links.of(messages)
    rewritable = _rewritable(messages, links, keep_system)
    pinned = first_user_message(messages) if pin_first else None
    if pinned is not None:  # kept apart from the units, and maybe left out: no lower bound
        rewritable.add(pinned.seq - 1)
    protected = _protected_start(links, keep_recent, rewritable)
    floor = lower_bound_counter(counter)
    floored: set[str] = set()
    cost, index = 0, len(counted)
    while index > protected or (index > 0 and cost <= limit):  # the sendable window
        index -= 1
        prunable = index < protected and index not in rewritable
        message, lowest = _sendable(counted[index], counter, floor, prunable)
        if message.overhead is not None:
            floored.add(message.id)
        counted[index] = message
        cost += 0 if index in rewritable else lowest
    if cost <= limit:  # the whole history may be sent: count it all
        return NewestCounts(count_all(messages, counter), frozenset())
    pinned_at = None if pinned is None else pinned.seq - 1
    start, units = _cut(messages, links, rewritable, pinned_at, end=index)
    handed = counted[start:]
    stand_ins = {m.id for m in counted[start:index]}  # tokens 0: on their way out
    if pinned is not None and pinned.seq - 1 < index:  # older than the window: counted here
        at = pinned.seq - 1
        pinned = pinned.counted(counter.count_message(pinned))
        stand_ins.discard(pinned.id)
        if at < start:
            handed.insert(0, pinned)
        else:
            handed[at - start] = pinned
    left_out = tuple(m.id for i, m in enumerate(messages[:start]) if i != pinned_at)
    return NewestCounts(handed, frozenset(stand_ins), frozenset(floored), left_out, units)


def count_newest_for(
    request: AssemblyInput, messages: Sequence[Message], counter: TiktokenCounter
) -> NewestCounts:
    """`count_newest` under `request`'s limit and settings."""
    budget = compute_budget(request.context_window, request.settings, request.max_tokens)
    return count_newest(
        messages,
        counter,
        limit=estimate_limit(budget.tokens, request.calibration_ratio),
        pin_first=request.settings.pin_first_message,
        keep_system=request.format == "raw",
        keep_recent=request.settings.keep_recent,
    )


def _cut(
    messages: Sequence[Message],
    links: _Links,
    rewritable: set[int],
    pinned_at: int | None,
    *,
    end: int,
) -> tuple[int, int]:
    """(start, units): the latest index ≤ `end` from which the engine can be handed the
    history, and how many units it would make of the messages before it (the pinned one is
    apart). A cut is a unit boundary where no tool id is used on both sides; nothing before it
    may be rewritten or dropped by the engine's repairs (`rewritable`); and the newest user
    turn stays after it, since the drop loop asks whether there is one."""
    end = min([end, *(i for i in rewritable if i != pinned_at)])
    newest_user = next(
        (
            i
            for i in range(len(messages) - 1, -1, -1)
            if i != pinned_at and is_user_turn(messages[i])
        ),
        None,
    )
    if newest_user is not None:
        end = min(end, newest_user)
    first_use: dict[str, int] = {}
    for index, (calls, results) in enumerate(zip(links.calls, links.results, strict=True)):
        for tool_id in (*calls, *results):
            first_use.setdefault(tool_id, index)
    # boundary at p: every id used at p or later was first used at p or later
    boundaries, reach = [], len(messages)
    for index in range(len(messages) - 1, -1, -1):
        for tool_id in (*links.calls[index], *links.results[index]):
            reach = min(reach, first_use[tool_id])
        if reach >= index and index <= end:
            boundaries.append(index)
    start = boundaries[0] if boundaries else 0
    return start, sum(1 for p in boundaries if p < start and p != pinned_at)


def _sendable(
    message: Message, counter: TiktokenCounter, floor: LowerBoundCounter, prunable: bool
) -> tuple[Message, int]:
    """The message as it may be sent, and its lowest possible cost.

    Counted exactly, except one the engine is sure to prune (`prunable`: eligible, and not
    rewritten first) whose excerpt is already under a floor of its full count: that floor
    stands in, with the exact overhead beside it so the excerpt is counted exactly, and its
    long text is never encoded.
    """
    if prunable and has_bulky_text(message):
        bare = dataclasses.replace(message, content="")  # the body's count cancels out
        overhead = max(0, counter.count_message(bare) - body_tokens(bare, counter))
        at_least = floor.count_message(message)
        floored = message.counted(at_least, overhead)
        cut = excerpted(floored, counter)
        if cut is not None and cut.tokens < at_least:
            return floored, cut.tokens
    message = message.counted(counter.count_message(message))
    # Its media may be old by the time the engine prunes it: the lowest cost assumes so.
    cut = excerpted(message, counter, media=True)
    return message, message.tokens if cut is None else min(message.tokens, cut.tokens)


def assemble_newest(
    request: AssemblyInput,
    messages: Sequence[Message],
    counter: TiktokenCounter,
    *,
    explain: bool = False,
) -> AssemblyResult:
    """`assemble` over posted `messages` (tokens not counted yet), counting newest → oldest
    only as far as the limit can reach (the module docstring); every message counted when
    that cannot be shown (`explain`, or a result that rests on a stand-in)."""
    # A provider compaction decides where the context starts, from anywhere in the history:
    # the engine must see all of it.
    if not explain and compaction_floor(messages, request.format) is None:
        newest = count_newest_for(request, messages, counter)
        try:
            result = assemble_handed(request, newest, counter)
        except (BudgetTooSmall, ContextInvariantError):
            result = None  # decided again with every count, which raises the same or serves
        if result is not None and sent_exactly(newest, result):
            return result
    counted = tuple(count_all(messages, counter))
    return assemble(dataclasses.replace(request, messages=counted), counter)


def assemble_handed(
    request: AssemblyInput, newest: NewestCounts, counter: TiktokenCounter
) -> AssemblyResult:
    """`assemble` over what `newest` hands over; the messages left out before the cut are
    reported dropped, as the engine reports the ones it drops (ids are posted indexes)."""
    handed = Handed(newest.stand_ins, newest.left_out_units)
    result = assemble(
        dataclasses.replace(request, messages=tuple(newest.messages)), counter, handed
    )
    if not newest.left_out:
        return result
    return dataclasses.replace(
        result,
        dropped=tuple(sorted((*newest.left_out, *result.dropped), key=int)),
        messages_total=result.messages_total + len(newest.left_out),
    )


def sent_exactly(newest: NewestCounts, result: AssemblyResult) -> bool:
    """Whether `result` holds only exact counts: every stand-in dropped, and every floored
    message dropped or sent as its (exactly counted) excerpt."""
    dropped = set(result.dropped)
    return newest.stand_ins <= dropped and newest.floored <= dropped.union(result.pruned)


__all__ = [
    "NewestCounts",
    "assemble_handed",
    "assemble_newest",
    "count_all",
    "count_newest",
    "count_newest_for",
    "sent_exactly",
]
