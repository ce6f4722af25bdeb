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
from app.engine.cache import cumulative_tokens, place_breakpoints, prefix_chain
from app.engine.fit import State, Status, fit, prune
from app.engine.fold import FoldPlan, fold_bounds, make_plan, plan_fold_count
from app.engine.render import (
    CONTINUATION_TEXT,
    SUMMARY_HEADER,
    SYNTHETIC,
    SYNTHETIC_SUMMARY,
    SYNTHETIC_SUMMARY_ACK,
    Format,
    as_user_note,
    render,
    render_tools,
    summary_pair,
)
from app.engine.types import Message
from app.engine.units import (
    Unit,
    first_user_message,
    group_units,
)
from app.engine.validate import ContextInvariantError, check
from app.tokens.base import BareMessage, TokenCounter

Mode = Literal["auto", "never", "force"]
SENT: frozenset[str] = frozenset({"included", "pruned", "truncated"})


@dataclass(frozen=True, slots=True)
class AssemblyInput:
    messages: Sequence[Message]
    """Messages after the clear marker: at least the pinned first user message and all after
    `summary_through_seq` (what GET …/context loads); covered ones too when explaining."""
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
    prune_anchor_seq: int | None = None
    """The newest seq when the first context after the last fold was served: the older
    eligible messages up to it are pruned at once (that request broke the cache anyway)."""


@dataclass(frozen=True, slots=True)
class ExplainEntry:
    id: str
    """The stored message id, or for a message Foldwise adds its SYNTHETIC tag (seq 0)."""
    seq: int
    status: Status | Literal["synthetic"]
    tokens: int


@dataclass(frozen=True, slots=True)
class AssemblyResult:
    system: str | list[dict[str, Any]] | None
    """A string, or one text block carrying a `cache_control` breakpoint (anthropic)."""
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
    prefix_chain: tuple[str, ...]
    """Fingerprints of [tools + system, each output message] (app/engine/cache.py)."""
    prefix_tokens: tuple[int, ...]
    """Tokens up to each element of `prefix_chain`."""
    breakpoints: int
    """`cache_control` markers Foldwise placed."""
    sources: tuple[str, ...]
    """Per output message: the stored message id it renders, or a SYNTHETIC tag."""


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
    # Counted as sent: a top-level string (anthropic, raw) or a system message (openai; its
    # framing is counted even when empty, since a summary placed in the system may fill it).
    if fmt == "openai":
        system_tokens = counter.count_message(BareMessage("system", request.system_prompt))
    else:
        system_tokens = counter.count_text(request.system_prompt or "")
    tools_tokens = counter.count_tools(tools) if tools else 0
    if system_tokens + tools_tokens > limit:
        raise BudgetTooSmall(
            "the system prompt and tools alone exceed the budget",
            {"budget": budget.tokens, "system_tokens": system_tokens, "tools_tokens": tools_tokens},
        )
    state = State(
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
    if request.summary and counter.count_text(request.summary) > share:
        state.warnings.append("summary is over its share of the budget")

    plan = _plan(state, grouping.units, limit, share, {m.id: m for m in ordered})
    if state.total() > limit or request.prune_anchor_seq is not None:
        prune(state, limit)
    fit(state, limit)

    rendered = render(
        state.sent(),
        fmt,
        system_prompt=request.system_prompt,
        summary=state.summary,
        placement=settings.summary_placement,
        tools=request.tools,
    )
    check(rendered, fmt)
    chain = prefix_chain(rendered.system, rendered.messages, tools)
    system_sent: str | list[dict[str, Any]] | None = rendered.system
    messages_sent, placed = rendered.messages, 0
    if fmt == "anthropic" and settings.cache_breakpoints:
        sources = rendered.sources
        ack = sources.index(SYNTHETIC_SUMMARY_ACK) if SYNTHETIC_SUMMARY_ACK in sources else None
        system_sent, messages_sent, placed = place_breakpoints(
            rendered.system, rendered.messages, tools, summary_ack_index=ack
        )
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
    tokens_of = {e.id: e.tokens for e in explain}
    tokens_of[SYNTHETIC_SUMMARY] = 0 if settings.summary_placement == "system" else summary_tokens
    head = system_tokens + tools_tokens + summary_tokens - tokens_of[SYNTHETIC_SUMMARY]
    added = [s for s in rendered.sources if s in SYNTHETIC]
    explain = tuple(ExplainEntry(s, 0, "synthetic", 0) for s in added) + explain
    return AssemblyResult(
        system=system_sent,
        messages=messages_sent,
        tools=tools,
        usage=usage,
        explain=explain,
        warnings=tuple(state.warnings),
        messages_included=_included(rendered.sources, fmt),
        messages_total=len(ordered),
        fold_plan=plan,
        pruned=tuple(e.id for e in explain if e.status == "pruned"),
        dropped=tuple(e.id for e in explain if e.status == "dropped"),
        summary_sent=state.summary,
        prefix_chain=tuple(chain),
        prefix_tokens=tuple(cumulative_tokens(head, rendered.sources, tokens_of)),
        breakpoints=placed,
        sources=tuple(rendered.sources),
    )


def _included(sources: Sequence[str], fmt: Format) -> int:
    """Output messages; for openai_responses (several items per stored message) the stored
    and synthetic messages they come from."""
    return len(dict.fromkeys(sources)) if fmt == "openai_responses" else len(sources)


def _plan(
    state: State, units: list[Unit], limit: int, share: int, originals: dict[str, Message]
) -> FoldPlan | None:
    mode = state.request.mode
    if mode == "never" or (mode == "auto" and state.total() <= limit):
        return None
    if mode == "auto":  # over budget verbatim: would pruning alone do?
        trial = State(
            state.request, state.counter, state.fixed, list(units), state.pinned, state.summary
        )
        if prune(trial, limit) and trial.total() <= limit:
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
    ordered: list[Message], state: State, through_seq: int, not_sent: Mapping[str, str]
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
