"""Tier 3: choose which units to fold into the summary (the summarizer call happens outside).

A fold takes the oldest unsummarized units, a contiguous prefix, so that afterwards the
context lands at or below its target (hysteresis: the next turns are served verbatim instead
of folding again at once): `fold_target × budget`, or lower when that would leave room for
fewer than RUNWAY_MESSAGES average-sized messages (`fold_target_tokens`). The newest units
stay verbatim. Never folded: the
pinned message (not a unit at all), the last `keep_recent` messages unless they alone are over
the budget (then down to the newest user turn among them), and the last unit (a pending call).
`force` folds everything foldable but the last `keep_recent` messages.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from app.engine.types import Message
from app.engine.units import Unit, newest_user_unit

FoldTrigger = Literal["threshold", "force", "ahead"]

# A summarizer call costs a round trip (seconds with an LLM): fold at least two units or a
# tenth of the budget, so the next turns do not pay for another fold straight away.
MIN_FOLD_UNITS = 2
MIN_FOLD_SHARE = 0.10
# A fold (or a prune) rewrites the provider's cached prefix from where it changes, and the
# tokens after that are billed as new input (x1.25 written, vs x0.1 read). Each such break
# must buy room for at least this many more messages of the session's average size before
# the next one: at a budget only a few turns wide, a fold goes deeper than `fold_target`
# (down to the recent messages) instead of breaking the cache every few turns.
RUNWAY_MESSAGES = 32


@dataclass(frozen=True, slots=True)
class FoldPlan:
    """What the service gives the summarizer: exactly these stored messages, in seq order."""

    messages: tuple[Message, ...]
    through_seq: int
    through_id: str
    trigger: FoldTrigger
    tokens: int
    """Tokens of the folded messages as they would have been sent."""
    expected_tokens: int
    """Estimated context after the fold, with a full-size summary; at most `target_tokens`
    unless the recent messages alone are over it."""
    target_tokens: int
    reason: str


@dataclass(frozen=True, slots=True)
class FoldBounds:
    keep_from: int
    """First unit index kept verbatim by `keep_recent` (foldable only when over budget)."""
    never_from: int
    """First unit index never folded (newest user message, pending call)."""


def fold_bounds(units: Sequence[Unit], keep_recent: int) -> FoldBounds:
    """Where folding (or dropping) must stop.

    The last unit (it holds the pending call, if any) is never folded. The last `keep_recent`
    messages are kept unless they alone are over the budget; then they may go too, up to the
    newest user turn among them. An older user turn is folded like any other unit: in a long
    tool loop the newest instruction may be far back, and everything after it must stay
    foldable.
    """
    last = max(0, len(units) - 1)
    recent_left, keep_from = keep_recent, len(units)
    while keep_from > 0 and recent_left > 0:
        keep_from -= 1
        recent_left -= len(units[keep_from].messages)
    keep_from = min(keep_from, last)
    newest_user = newest_user_unit(units)
    never_from = newest_user if newest_user is not None and newest_user >= keep_from else last
    return FoldBounds(keep_from=keep_from, never_from=never_from)


def runway_tokens(total_tokens: int, messages: int) -> int:
    """Room for RUNWAY_MESSAGES messages of the average size of `messages` messages holding
    `total_tokens` (the unsummarized messages as stored: what the next turns will append)."""
    return math.ceil(RUNWAY_MESSAGES * total_tokens / messages) if messages else 0


def fold_target_tokens(limit: int, fold_target: float, runway: int, floor: int = 0) -> int:
    """Where a fold lands: `fold_target × limit`, lowered to leave `runway` tokens free, but
    not below `floor` (what no fold can go under: the recent messages and the rest)."""
    target = math.floor(fold_target * limit)
    return max(0, min(target, max(limit - runway, floor)))


def fold_floor(units: Sequence[Unit], bounds: FoldBounds, other_tokens: int) -> int:
    """The context after folding everything a threshold fold may: the kept recent units."""
    return other_tokens + sum(unit.tokens for unit in units[bounds.keep_from :])


def plan_fold_count(
    units: Sequence[Unit],
    bounds: FoldBounds,
    *,
    other_tokens: int,
    limit: int,
    target: int,
    force: bool,
) -> int:
    """How many of the oldest units to fold to land at `target` (`fold_target_tokens`);
    `other_tokens` = everything but the units, with the room reserved for the new summary
    already included."""
    if force:
        return bounds.keep_from
    remaining = sum(unit.tokens for unit in units)
    count, folded = 0, 0
    minimum_tokens = MIN_FOLD_SHARE * limit
    while count < bounds.keep_from and (
        other_tokens + remaining > target or (count < MIN_FOLD_UNITS and folded < minimum_tokens)
    ):
        remaining -= units[count].tokens
        folded += units[count].tokens
        count += 1
    # The recent messages alone are over the budget itself: fold into them too.
    while count < bounds.never_from and other_tokens + remaining > limit:
        remaining -= units[count].tokens
        count += 1
    return count


def make_plan(
    units: Sequence[Unit],
    count: int,
    originals: dict[str, Message],
    *,
    trigger: FoldTrigger,
    other_tokens: int,
    target_tokens: int,
) -> FoldPlan | None:
    """The plan folding `units[:count]`; None when there is nothing to fold."""
    messages = tuple(originals[m.id] for unit in units[:count] for m in unit.messages)
    if not messages:
        return None
    last = max(messages, key=lambda m: m.seq)
    expected = other_tokens + sum(unit.tokens for unit in units[count:])
    reason = (
        "forced: everything but the recent messages"
        if trigger == "force"
        else f"over the budget after pruning; fold down to {target_tokens} tokens"
    )
    return FoldPlan(
        messages=messages,
        through_seq=last.seq,
        through_id=last.id,
        trigger=trigger,
        tokens=sum(unit.tokens for unit in units[:count]),
        expected_tokens=expected,
        target_tokens=target_tokens,
        reason=reason,
    )
