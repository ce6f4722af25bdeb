"""The last tiers of docs/reference.md §Assembly: drop the oldest units, cut the summary to
its share, truncate the largest message, gentlest first, until the state fits its limit.
"""

from __future__ import annotations

from app.core.errors import BudgetTooSmall
from app.engine.budget import summary_share
from app.engine.folds import fold_bounds
from app.engine.state import State
from app.engine.truncate import truncate_message, truncate_text
from app.engine.units import is_user_turn, newest_user_unit

# A message cut below this many tokens says nothing useful; drop older units instead.
MIN_TRUNCATED_TOKENS = 16


def _truncate_largest(state: State, limit: int, spare: str | None = None) -> bool:
    """Cut the largest message (but `spare`) that can still shrink; True when something got
    smaller.

    One message absorbs the whole excess when it can; otherwise it is cut to the smallest
    allowance it accepts (doubling from MIN_TRUNCATED_TOKENS) and the loop goes on.
    """
    excess = state.total() - limit
    for message in sorted(state.sent(), key=lambda m: -m.tokens):
        if message.id == spare:
            continue
        allowance = max(MIN_TRUNCATED_TOKENS, message.tokens - excess)
        while allowance < message.tokens:
            cut = truncate_message(message, allowance, state.counter)
            if cut is not None and cut.tokens < message.tokens:
                state.warnings.append(
                    f"message {message.id} truncated from {message.tokens} to {cut.tokens} tokens"
                )
                state.replace(message, cut, "truncated")
                return True
            allowance *= 2
    return False


def fit_to_limit(state: State, limit: int) -> None:
    """Drop and cut, gentlest first, until the state fits `limit`."""
    newest_user = newest_user_unit(state.units)
    protected_from = fold_bounds(state.units, state.request.settings.keep_recent).never_from
    dropped = 0
    while state.total() > limit and dropped < protected_from:
        state.drop_unit(0)
        dropped += 1
    dropped += state.handed.left_out_units
    if dropped:
        state.warnings.append(f"left out the {dropped} oldest unit(s) to fit the budget")
    share = summary_share(limit, state.request.settings)
    if state.total() > limit and state.summary and state.counter.count_text(state.summary) > share:
        state.summary = truncate_text(state.summary, share, state.counter)
        state.warnings.append("summary cut to its share of the budget")
    if state.total() > limit and state.pinned is not None and newest_user is not None:
        state.drop_pinned()
        state.warnings.append("pinned first message left out: it does not fit")
    while state.total() > limit:
        newest_user = newest_user_unit(state.units)
        droppable = len(state.units) > 1 and newest_user != 0
        # The newest user message is cut only once the summary and older units are gone, and
        # then to all the room that is left (cutting it first left most of a tight budget idle).
        spare = _newest_user_id(state) if droppable or state.summary else None
        if _truncate_largest(state, limit, spare):
            continue
        if droppable:
            state.drop_unit(0)
        elif state.summary:
            state.summary = None
            state.warnings.append("summary left out: it does not fit")
        else:
            _last_resort(state, limit)


def _newest_user_id(state: State) -> str | None:
    users = [m.id for m in state.sent() if is_user_turn(m)]
    return users[-1] if users else None


def _last_resort(state: State, limit: int) -> None:
    """Only the newest user message, cut to what is left (docs/reference.md §Assembly, tier 4)."""
    users = [m for m in state.sent() if is_user_turn(m)]
    if not users:
        raise BudgetTooSmall(
            "nothing but the system prompt and tools fits the budget", {"budget": limit}
        )
    newest = users[-1]
    for message in state.sent():
        if message.id != newest.id:
            state.status[message.id] = "dropped"
    state.keep_only(newest)
    cut = truncate_message(newest, limit - state.total() + newest.tokens, state.counter)
    if cut is None:
        raise BudgetTooSmall(
            "not even a truncated newest user message fits the budget",
            {"budget": limit, "fixed_tokens": state.fixed},
        )
    if cut is not newest:
        state.replace(newest, cut, "truncated")
        state.warnings.append(
            f"only the newest user message fits; truncated to {cut.tokens} tokens"
        )
