"""Assemble one context: verbatim → prune → fold plan (or drop) → truncate → render → validate.

The service calls `assemble` twice when a fold is due: the first result carries a `fold_plan`
(the exact messages for the summarizer) and a usable, already-fitted context (oldest units
dropped); after persisting the new summary the service calls again with `mode="auto"` and the
new `summary`/`summary_through_seq`, and serves that result. With `mode="never"` the oldest
units are dropped (status `dropped`) and no plan is made.

Accounting: untouched messages cost their stored `tokens`; changed ones are re-counted; the
system prompt, summary section or pair, the continuation message and the rendered tools are
counted as sent. Format conversion of stored messages is treated as token-neutral. The sum of
these is `estimated_tokens`, and `total_tokens = ceil(estimated × ratio)` is held to the budget.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from app.core.errors import BudgetTooSmall
from app.engine.budget import (
    MESSAGE_OVERHEAD_TOKENS,
    ContextSettings,
    Usage,
    calibrated,
    compute_budget,
    estimate_limit,
    summary_share,
)
from app.engine.fold import FoldPlan, fold_bounds, make_plan, plan_fold_count
from app.engine.prune import prune_message
from app.engine.render import (
    CONTINUATION_TEXT,
    SUMMARY_HEADER,
    Format,
    as_user_note,
    render,
    render_tools,
    summary_pair,
)
from app.engine.truncate import truncate_message, truncate_text
from app.engine.types import Message
from app.engine.units import (
    Unit,
    first_user_message,
    group_units,
    is_user_turn,
    newest_user_unit,
)
from app.engine.validate import ContextInvariantError, check
from app.tokens.base import TokenCounter

Mode = Literal["auto", "never", "force"]
Status = Literal["included", "pruned", "truncated", "summarized", "dropped"]
SENT: frozenset[str] = frozenset({"included", "pruned", "truncated"})

# A message cut below this many tokens says nothing useful; drop older units instead.
MIN_TRUNCATED_TOKENS = 16


@dataclass(frozen=True, slots=True)
class AssemblyInput:
    messages: Sequence[Message]
    """Every stored message after the clear marker, summarized ones included."""
    context_window: int
    settings: ContextSettings = field(default_factory=ContextSettings)
    system_prompt: str | None = None
    tools: Sequence[Mapping[str, Any]] | None = None
    summary: str | None = None
    summary_through_seq: int = 0
    max_tokens: int | None = None
    format: Format = "anthropic"
    mode: Mode = "auto"
    calibration_ratio: float = 1.0


@dataclass(frozen=True, slots=True)
class ExplainEntry:
    id: str
    seq: int
    status: Status
    tokens: int


@dataclass(frozen=True, slots=True)
class AssemblyResult:
    system: str | None
    messages: list[dict[str, Any]]
    tools: list[dict[str, Any]] | None
    usage: Usage
    explain: tuple[ExplainEntry, ...]
    warnings: tuple[str, ...]
    messages_included: int
    messages_total: int
    fold_plan: FoldPlan | None
    pruned: tuple[str, ...]
    dropped: tuple[str, ...]
    summary_sent: str | None
    """The summary text as sent (cut with a marker in the last resort), or None."""
    summary_over_share: bool
    """The stored summary is longer than its share of the budget: the service re-compresses."""


@dataclass(slots=True)
class _State:
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


def _prune(state: _State, limit: int) -> None:
    keep_recent = state.request.settings.keep_recent
    messages = [m for unit in state.units for m in unit.messages]
    eligible = messages[: max(0, len(messages) - keep_recent)]
    for message in eligible:
        if state.total() <= limit:
            return
        pruned = prune_message(message, state.counter)
        if pruned is not None:
            state.replace(message, pruned, "pruned")


def _truncate_largest(state: _State, limit: int) -> bool:
    """Cut the largest message that can still shrink; True when something got smaller.

    One message absorbs the whole excess when it can; otherwise it is cut to the smallest
    allowance it accepts (doubling from MIN_TRUNCATED_TOKENS) and the loop goes on.
    """
    excess = state.total() - limit
    for message in sorted(state.sent(), key=lambda m: -m.tokens):
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


def _fit(state: _State, limit: int) -> None:
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
        if _truncate_largest(state, limit):
            continue
        newest_user = newest_user_unit(state.units)
        if len(state.units) > 1 and newest_user != 0:
            state.drop_unit(0)
        elif state.summary:
            state.summary = None
            state.warnings.append("summary left out: it does not fit")
        else:
            _last_resort(state, limit)


def _last_resort(state: _State, limit: int) -> None:
    """Only the newest user message, cut to what is left (SPEC §10 tight budgets)."""
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


def assemble(request: AssemblyInput, counter: TokenCounter) -> AssemblyResult:
    settings, fmt = request.settings, request.format
    budget = compute_budget(request.context_window, settings, request.max_tokens)
    limit = estimate_limit(budget.tokens, request.calibration_ratio)
    ordered = sorted(request.messages, key=lambda m: m.seq)
    pinned = first_user_message(ordered) if settings.pin_first_message else None
    live = [m for m in ordered if m.seq > request.summary_through_seq and m is not pinned]
    if fmt != "raw":
        live = [as_user_note(m, counter) for m in live]
    grouping = group_units(live, counter)
    tools = render_tools(request.tools, fmt)
    system_tokens = counter.count_text(request.system_prompt or "")
    system_tokens += MESSAGE_OVERHEAD_TOKENS if fmt == "openai" else 0
    tools_tokens = counter.count_text(json.dumps(tools, ensure_ascii=False)) if tools else 0
    if system_tokens + tools_tokens > limit:
        raise BudgetTooSmall(
            "the system prompt and tools alone exceed the budget",
            {"budget": budget.tokens, "system_tokens": system_tokens, "tools_tokens": tools_tokens},
        )
    state = _State(
        request,
        counter,
        system_tokens + tools_tokens,
        list(grouping.units),
        pinned,
        request.summary,
    )
    for message_id in grouping.repaired:
        state.status[message_id] = "pruned"
    state.warnings += [f"message {i} not sent: {why}" for i, why in grouping.dropped.items()]
    share = summary_share(limit, settings)
    over_share = bool(request.summary) and counter.count_text(request.summary or "") > share
    if over_share:
        state.warnings.append("summary is over its share of the budget: re-compress it")

    plan = _plan(state, grouping.units, limit, share, {m.id: m for m in ordered})
    if state.total() > limit:
        _prune(state, limit)
    _fit(state, limit)

    rendered = render(
        state.sent(),
        fmt,
        system_prompt=request.system_prompt,
        summary=state.summary,
        placement=settings.summary_placement,
        tools=request.tools,
    )
    check(rendered, fmt)
    summary_tokens, message_tokens = state.summary_tokens(), state.message_tokens()
    estimated = state.total()
    usage = Usage(
        context_window=budget.context_window,
        threshold=budget.threshold,
        reserved_output_tokens=budget.reserved_output_tokens,
        budget=budget.tokens,
        system_tokens=system_tokens,
        tools_tokens=tools_tokens,
        summary_tokens=summary_tokens,
        message_tokens=message_tokens,
        estimated_tokens=estimated,
        total_tokens=calibrated(estimated, request.calibration_ratio),
        calibration_ratio=request.calibration_ratio,
    )
    if usage.total_tokens > budget.tokens:
        raise ContextInvariantError([f"total {usage.total_tokens} over budget {budget.tokens}"])
    explain = _explain(ordered, state, request.summary_through_seq, grouping.dropped)
    return AssemblyResult(
        system=rendered.system,
        messages=rendered.messages,
        tools=tools,
        usage=usage,
        explain=explain,
        warnings=tuple(state.warnings),
        messages_included=sum(e.status in SENT for e in explain),
        messages_total=len(ordered),
        fold_plan=plan,
        pruned=tuple(e.id for e in explain if e.status == "pruned"),
        dropped=tuple(e.id for e in explain if e.status == "dropped"),
        summary_sent=state.summary,
        summary_over_share=over_share,
    )


def _plan(
    state: _State, units: list[Unit], limit: int, share: int, originals: dict[str, Message]
) -> FoldPlan | None:
    mode = state.request.mode
    if mode == "never" or (mode == "auto" and state.total() <= limit):
        return None
    if mode == "auto":  # over budget verbatim: would pruning alone do?
        trial = _State(
            state.request, state.counter, state.fixed, list(units), state.pinned, state.summary
        )
        _prune(trial, limit)
        if trial.total() <= limit:
            return None
    bounds = fold_bounds(units, state.request.settings.keep_recent)
    # Room for the new summary in either placement (both framings: an over-estimate by a few).
    counter = state.counter
    framing = counter.count_text("\n\n" + SUMMARY_HEADER) + 2 * MESSAGE_OVERHEAD_TOKENS
    framing += sum(counter.count_content(text) for text in summary_pair(""))
    continuation = counter.count_content(CONTINUATION_TEXT) + MESSAGE_OVERHEAD_TOKENS
    pinned_tokens = state.pinned.tokens if state.pinned else 0
    other = state.fixed + pinned_tokens + share + framing + continuation
    settings = state.request.settings
    count = plan_fold_count(
        units,
        bounds,
        other_tokens=other,
        limit=limit,
        fold_target=settings.fold_target,
        force=mode == "force",
    )
    return make_plan(
        units,
        count,
        originals,
        trigger="force" if mode == "force" else "threshold",
        other_tokens=other,
        target_tokens=math.floor(settings.fold_target * limit),
    )


def _explain(
    ordered: list[Message], state: _State, through_seq: int, not_sent: Mapping[str, str]
) -> tuple[ExplainEntry, ...]:
    sent = {m.id: m for m in state.sent()}
    entries = []
    for message in ordered:
        status: Status
        if message.id in sent:
            status = state.status.get(message.id, "included")
            status = "included" if status not in SENT else status
            tokens = sent[message.id].tokens
        elif (
            message.id in not_sent
            or message.seq > through_seq
            or state.status.get(message.id) == "dropped"
        ):
            status, tokens = "dropped", message.tokens
        else:
            status, tokens = "summarized", message.tokens
        entries.append(ExplainEntry(message.id, message.seq, status, tokens))
    return tuple(entries)
