"""Fitting a context to its limit: the pruning tier and the drop/cut tiers of
docs/reference.md §Assembly.

`State` is what would be sent and its running token total; `prune` cuts bulky content of
older messages, `fit` then drops the oldest units, cuts the summary to its share, and
truncates the largest message, gentlest first, until the total is within the limit.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal

from app.core.errors import BudgetTooSmall
from app.engine.budget import MESSAGE_OVERHEAD_TOKENS, summary_share
from app.engine.fold import fold_bounds
from app.engine.prune import prune_message
from app.engine.render import CONTINUATION_TEXT, SUMMARY_HEADER, summary_pair
from app.engine.truncate import truncate_message, truncate_text
from app.engine.types import Message
from app.engine.units import Unit, is_user_turn, newest_user_unit
from app.tokens.base import TokenCounter

if TYPE_CHECKING:  # only for annotations: assemble imports this module
    from app.engine.assemble import AssemblyInput

Status = Literal["included", "pruned", "truncated", "summarized", "dropped"]

# A message cut below this many tokens says nothing useful; drop older units instead.
MIN_TRUNCATED_TOKENS = 16


@dataclass(slots=True)
class State:
    """What would be sent; `total()` is the estimate held to `limit`."""

    request: AssemblyInput
    counter: TokenCounter
    fixed: int
    units: list[Unit]
    pinned: Message | None
    summary: str | None
    status: dict[str, Status] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)
    _summary_cost: tuple[str | None, int] = (None, 0)
    # Sum of the stored tokens of what would be sent, kept up to date by every mutation below
    # (recomputing it per loop step made pruning and dropping quadratic: 600 ms for 1k messages).
    _message_sum: int | None = None

    def sent(self) -> list[Message]:
        messages = [m for unit in self.units for m in unit.messages]
        return sorted([self.pinned, *messages] if self.pinned else messages, key=lambda m: m.seq)

    def summary_tokens(self) -> int:
        if not self.summary:
            return 0
        if self._summary_cost[0] != self.summary:  # counted once per text, not per loop step
            self._summary_cost = (self.summary, self._count_summary(self.summary))
        return self._summary_cost[1]

    def _count_summary(self, summary: str) -> int:
        if self.request.settings.summary_placement == "system":
            return self.counter.count_text("\n\n" + SUMMARY_HEADER + summary)
        pair = summary_pair(summary)
        return sum(self.counter.count_content(t) for t in pair) + 2 * MESSAGE_OVERHEAD_TOKENS

    def _first_sent(self) -> Message | None:
        # Units are contiguous seq spans in order, so the first unit starts the history.
        first = self.units[0].messages[0] if self.units else None
        if self.pinned is not None and (first is None or self.pinned.seq < first.seq):
            return self.pinned
        return first

    def message_tokens(self) -> int:
        if self._message_sum is None:
            self._message_sum = sum(u.tokens for u in self.units) + (
                self.pinned.tokens if self.pinned else 0
            )
        tokens = self._message_sum
        first = self._first_sent()
        pair_first = self.summary and self.request.settings.summary_placement == "messages"
        if (
            self.request.format == "anthropic"
            and first is not None
            and first.role == "assistant"
            and not pair_first
        ):
            tokens += self.counter.count_content(CONTINUATION_TEXT) + MESSAGE_OVERHEAD_TOKENS
        return tokens

    def total(self) -> int:
        return self.fixed + self.summary_tokens() + self.message_tokens()

    def replace(self, old: Message, new: Message, status: Status) -> None:
        self.status[old.id] = status
        if self.pinned is not None and self.pinned.id == old.id:
            self._adjust(self.pinned.tokens, new.tokens)
            self.pinned = new
            return
        for index, unit in enumerate(self.units):
            current = next((m for m in unit.messages if m.id == old.id), None)
            if current is not None:
                self._adjust(current.tokens, new.tokens)
                messages = tuple(new if m.id == old.id else m for m in unit.messages)
                self.units[index] = Unit(messages, unit.pending)
                return

    def replace_many(self, new: dict[str, Message], status: Status) -> None:
        """`replace` for many unit messages at once (id → new message): one pass, not n."""
        for index, unit in enumerate(self.units):
            if any(m.id in new for m in unit.messages):
                for message in unit.messages:
                    if message.id in new:
                        self.status[message.id] = status
                        self._adjust(message.tokens, new[message.id].tokens)
                messages = tuple(new.get(m.id, m) for m in unit.messages)
                self.units[index] = Unit(messages, unit.pending)

    def _adjust(self, removed: int, added: int) -> None:
        if self._message_sum is not None:
            self._message_sum += added - removed

    def drop_unit(self, index: int) -> None:
        for message in self.units[index].messages:
            self.status[message.id] = "dropped"
        self._adjust(self.units[index].tokens, 0)
        del self.units[index]

    def drop_pinned(self) -> None:
        if self.pinned is not None:
            self.status[self.pinned.id] = "dropped"
            self.pinned, self._message_sum = None, None

    def keep_only(self, message: Message) -> None:
        self.units, self.pinned, self._message_sum = [], message, None


def prune(state: State, limit: int) -> bool:
    """Tier 2 with hysteresis, replayed over the history in append order; False when some
    step could not prune down to its target (a fold is due instead).

    Pruning every turn "just enough" would change a message in the middle of the prompt on
    almost every turn and break the provider's prompt cache each time. Instead the history is
    replayed message by message as if a context were served after each append: whenever the
    total goes over `limit`, the oldest eligible messages (all but the last `keep_recent` at
    that point) are pruned down to `prune_target × limit`, and at least `prune_at_least`
    tokens. A step that cannot get down to `fold_target × limit` (where a fold would land)
    would only buy a turn or two before the next cache break: a fold is due there instead.
    At `prune_anchor_seq` (the newest message when the first context after the last fold was
    served) everything eligible is pruned: that request broke the cache anyway.
    The pruned set is a function of the messages and the anchor alone (one pass, each message
    pruned at most once), so appending messages only ever adds to it. Between folds everything
    but the units is constant, so the replay sees the numbers the earlier requests saw.
    """
    settings = state.request.settings
    messages = [m for unit in state.units for m in unit.messages]
    running = state.total() - sum(m.tokens for m in messages)
    target = min(limit, math.floor(settings.prune_target * limit))
    # Worth it only if it ends at least as low as a fold would (fold_target): else fold.
    acceptable = max(target, math.floor(settings.fold_target * limit))
    pruned: dict[str, Message] = {}
    cursor, settled = 0, True
    anchor = state.request.prune_anchor_seq
    for step, message in enumerate(messages):
        running += message.tokens
        at_anchor = (
            anchor is not None
            and message.seq <= anchor
            and (step + 1 == len(messages) or messages[step + 1].seq > anchor)
        )
        if at_anchor:  # everything eligible, in the request that folded
            while cursor < step + 1 - settings.keep_recent:
                running -= _prune_into(pruned, messages[cursor], state.counter)
                cursor += 1
        if running <= limit:
            continue
        eligible_end, freed = step + 1 - settings.keep_recent, 0
        while cursor < eligible_end and (running > target or freed < settings.prune_at_least):
            saved = _prune_into(pruned, messages[cursor], state.counter)
            freed, running, cursor = freed + saved, running - saved, cursor + 1
        settled = settled and running <= acceptable
    if pruned:
        state.replace_many(pruned, "pruned")
    return settled


def _prune_into(pruned: dict[str, Message], message: Message, counter: TokenCounter) -> int:
    """Prune `message` into `pruned` when it has bulky content; the tokens saved."""
    cut = prune_message(message, counter)
    if cut is None:
        return 0
    pruned[message.id] = cut
    return message.tokens - cut.tokens


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


def fit(state: State, limit: int) -> None:
    """Drop and cut, gentlest first, until the state fits `limit`."""
    newest_user = newest_user_unit(state.units)
    protected_from = fold_bounds(state.units, state.request.settings.keep_recent).never_from
    dropped = 0
    while state.total() > limit and dropped < protected_from:
        state.drop_unit(0)
        dropped += 1
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
