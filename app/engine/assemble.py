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

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

from app.core.errors import BudgetTooSmall
from app.engine import markers
from app.engine.budget import (
    MESSAGE_OVERHEAD_TOKENS,
    Budget,
    Usage,
    calibrated,
    compute_budget,
    estimate_limit,
    summary_share,
)
from app.engine.compaction import compaction_floor, from_compaction, opaque_at, window_start
from app.engine.fit import fit_to_limit
from app.engine.folds import (
    FoldPlan,
    fold_bounds,
    fold_floor,
    fold_target_tokens,
    make_plan,
    plan_fold_count,
    runway_tokens,
)
from app.engine.media import media_tokens
from app.engine.parts import format_warnings
from app.engine.prompt_cache import cumulative_tokens, place_breakpoints, prefix_chain
from app.engine.prune import prune_history
from app.engine.render import (
    CONTINUATION_TEXT,
    SUMMARY_HEADER,
    SYNTHETIC,
    SYNTHETIC_SUMMARY,
    SYNTHETIC_SUMMARY_ACK,
    SYNTHETIC_SYSTEM,
    Format,
    Rendered,
    as_user_note,
    dropped_tools,
    render,
    render_tools,
    summary_pair,
)
from app.engine.state import WHOLE, AssemblyInput, Handed, Mode, State, Status
from app.engine.types import Message
from app.engine.units import Unit, first_user_message, group_units
from app.engine.validate import ContextInvariantError, check
from app.tokens.base import BareMessage, TokenCounter

__all__ = ["AssemblyInput", "AssemblyResult", "ExplainEntry", "Mode", "assemble"]

# `synthetic`: a message Foldwise adds (id = its tag: system, summary, summary_ack,
# continuation; seq 0), listed first, in output order.
ExplainStatus = Literal[Status, "synthetic"]
SENT: frozenset[str] = frozenset({"included", "pruned", "truncated"})
OPAQUE_FLOOR_WARNING = (
    "this context starts at a Responses compaction item, which Foldwise cannot read: older "
    "turns after it were left out instead of folded (compact again, or serve another format)"
)


@dataclass(frozen=True, slots=True)
class ExplainEntry:
    id: str
    """The stored message id, or for a message Foldwise adds its SYNTHETIC tag (seq 0)."""
    seq: int
    status: ExplainStatus
    tokens: int


@dataclass(frozen=True, slots=True)
class AssemblyResult:
    system: str | list[dict[str, Any]] | None
    """A string, or (anthropic, breakpoints placed in it) text blocks: the system prompt, then
    the summary section, each marked when its breakpoint fits (app/engine/prompt_cache.py)."""
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
    """Fingerprints of [tools + system prompt, the summary section when in the system, each
    output message but openai's system message] (app/engine/prompt_cache.py)."""
    prefix_tokens: tuple[int, ...]
    """Tokens up to each element of `prefix_chain`."""
    breakpoints: int
    """`cache_control` markers Foldwise placed."""
    sources: tuple[str, ...]
    """Per output message: the stored message id it renders, or a SYNTHETIC tag."""


@dataclass(frozen=True, slots=True)
class _Fixed:
    """What every context of this request costs before any message: system prompt and tools."""

    system_tokens: int
    tools_tokens: int
    tools: list[dict[str, Any]] | None


def assemble(
    request: AssemblyInput, counter: TokenCounter, handed: Handed = WHOLE
) -> AssemblyResult:
    """One context within the budget (docs/reference.md §Assembly). `handed`: what the
    newest-window cut left out (app/engine/newest.py, its only caller that sets it)."""
    if request.system_prompt is not None and not request.system_prompt.strip():
        # Blank text is no system prompt: no provider accepts a whitespace-only system message.
        request = dataclasses.replace(request, system_prompt=None)
    budget = compute_budget(request.context_window, request.settings, request.max_tokens)
    limit = estimate_limit(budget.tokens, request.calibration_ratio)
    fixed = _fixed_costs(request, counter, budget, limit)
    ordered = sorted(request.messages, key=lambda m: m.seq)
    state, units, not_sent = _initial_state(request, ordered, counter, fixed, limit, handed)
    plan = _apply_tiers(state, units, limit, {m.id: m for m in ordered})
    rendered = render(
        state.sent(),
        request.format,
        system_prompt=request.system_prompt,
        summary=state.summary,
        placement=request.settings.summary_placement,
        tools=request.tools,
    )
    check(rendered, request.format)
    state.warnings += format_warnings(state.sent(), request.format)
    state.warnings += dropped_tools(request.tools, request.format)
    usage = _usage(request, budget, fixed, state)
    explain = _explain(ordered, state, request.summary_through_seq, not_sent)
    return _result(request, rendered, fixed, usage, state, explain, plan)


def _fixed_costs(
    request: AssemblyInput, counter: TokenCounter, budget: Budget, limit: int
) -> _Fixed:
    """System prompt and tools counted as sent: a top-level string (anthropic, raw) or a system
    message (openai; its framing is counted even when empty, since a summary placed in the
    system may fill it). Alone over the limit → BudgetTooSmall."""
    tools = render_tools(request.tools, request.format)
    if request.format == "openai":
        system_tokens = counter.count_message(BareMessage("system", request.system_prompt))
    else:
        system_tokens = counter.count_text(request.system_prompt or "")
    tools_tokens = counter.count_tools(tools) if tools else 0
    if system_tokens + tools_tokens > limit:
        raise BudgetTooSmall(
            "the system prompt and tools alone exceed the budget",
            {"budget": budget.tokens, "system_tokens": system_tokens, "tools_tokens": tools_tokens},
        )
    return _Fixed(system_tokens=system_tokens, tools_tokens=tools_tokens, tools=tools)


def _initial_state(
    request: AssemblyInput,
    ordered: list[Message],
    counter: TokenCounter,
    fixed: _Fixed,
    limit: int,
    handed: Handed,
) -> tuple[State, list[Unit], Mapping[str, str]]:
    """Everything after the summary, in units (repaired), plus the pinned message: the
    verbatim tier. Also the units as stored, and the messages repairs left out (id → why)."""
    settings = request.settings
    pinned = first_user_message(ordered) if settings.pin_first_message else None
    live = [m for m in ordered if m.seq > request.summary_through_seq and m is not pinned]
    pinned, live, folds, compacted = _from_compaction(request, pinned, live, counter)
    if request.format != "raw":
        live = [as_user_note(m, counter) for m in live]
    # A call is pending only when nothing follows it: not when the pinned first user message
    # (held apart from the units) comes after every live message.
    pinned_last = pinned is not None and bool(live) and pinned.seq > live[-1].seq
    grouping = group_units(live, counter, pending_allowed=not pinned_last)
    state = State(
        request=request,
        counter=counter,
        fixed=fixed.system_tokens + fixed.tools_tokens,
        units=list(grouping.units),
        pinned=pinned,
        summary=request.summary,
        handed=handed,
        folds=folds,
    )
    for message_id in grouping.repaired:
        state.status[message_id] = "pruned"
    state.status.update(dict.fromkeys(compacted, "compacted"))
    state.warnings += [f"message {i} not sent: {why}" for i, why in grouping.dropped.items()]
    share = summary_share(limit, settings)
    if request.summary and counter.count_text(request.summary) > share:
        state.warnings.append("summary is over its share of the budget")
    return state, list(grouping.units), grouping.dropped


def _from_compaction(
    request: AssemblyInput, pinned: Message | None, live: list[Message], counter: TokenCounter
) -> tuple[Message | None, list[Message], bool, list[str]]:
    """The context from the latest provider compaction its format honours (compaction.py):
    the pinned message and live messages from there on, whether Foldwise may fold (not past
    an opaque compaction, which it then holds first, as it holds the pinned message), and
    the ids of the messages the compaction stands for."""
    merged = sorted([*live, pinned] if pinned is not None else live, key=lambda m: m.seq)
    floor = compaction_floor(merged, request.format)
    if floor is None:
        return pinned, live, True, []
    start = from_compaction(merged[floor], request.format, counter)
    opaque = opaque_at(start, request.format)
    first = window_start(merged, floor) if opaque else floor
    compacted = [m.id for m in merged[:first]]
    kept, rest = merged[first:floor], merged[floor + 1 :]
    if opaque:  # the compaction takes the pinned message's place
        return start, [*kept, *rest], False, compacted
    still_pinned = pinned if pinned is not None and pinned.seq > start.seq else None
    return still_pinned, [start, *(m for m in rest if m is not still_pinned)], True, compacted


def _apply_tiers(
    state: State, units: list[Unit], limit: int, originals: dict[str, Message]
) -> FoldPlan | None:
    """Tier 2 (prune, with hysteresis), tier 3 (the fold plan, over the units as stored) and
    tier 4 (drop and cut) on `state`; the plan, or None when no fold is due."""
    over = state.total() > limit
    settled = True
    if over or state.request.prune_anchor_seq is not None:
        settled = prune_history(state, limit)
    mode = state.request.mode
    plan = None
    if not state.folds:  # past what Foldwise cannot read: fitted instead, and said so
        if state.total() > limit or mode == "force":
            state.warnings.append(OPAQUE_FLOOR_WARNING)
    # Auto folds only when over budget verbatim and pruning alone does not settle it.
    elif mode in ("force", "ahead") or (
        mode == "auto" and over and not (settled and state.total() <= limit)
    ):
        plan = _fold_plan(state, units, limit, originals)
    fit_to_limit(state, limit)
    return plan


def _fold_plan(
    state: State, units: list[Unit], limit: int, originals: dict[str, Message]
) -> FoldPlan | None:
    settings, counter, mode = state.request.settings, state.counter, state.request.mode
    bounds = fold_bounds(units, settings.keep_recent)
    # Room for the new summary in either placement (both framings: an over-estimate by a few).
    framing = counter.count_text("\n\n" + SUMMARY_HEADER) + 2 * MESSAGE_OVERHEAD_TOKENS
    framing += sum(counter.count_content(text) for text in summary_pair(""))
    continuation = counter.count_content(CONTINUATION_TEXT) + MESSAGE_OVERHEAD_TOKENS
    pinned_tokens = state.pinned.tokens if state.pinned else 0
    share = summary_share(limit, settings)
    other = state.fixed + pinned_tokens + share + framing + continuation
    messages = [m.tokens for unit in units for m in unit.messages]
    runway = runway_tokens(sum(messages), len(messages))
    floor = fold_floor(units, bounds, other)
    target = fold_target_tokens(limit, settings.fold_target, runway, floor)
    count = plan_fold_count(
        units, bounds, other_tokens=other, limit=limit, target=target, force=mode == "force"
    )
    return make_plan(
        units,
        count,
        originals,
        trigger=mode if mode in ("force", "ahead") else "threshold",
        other_tokens=other,
        target_tokens=target,
    )


def _usage(request: AssemblyInput, budget: Budget, fixed: _Fixed, state: State) -> Usage:
    """The usage block; a calibrated total over the budget is a bug (ContextInvariantError)."""
    estimated = state.total()
    usage = Usage(
        context_window=budget.context_window,
        threshold=budget.threshold,
        reserved_output_tokens=budget.reserved_output_tokens,
        budget=budget.tokens,
        system_tokens=fixed.system_tokens,
        tools_tokens=fixed.tools_tokens,
        summary_tokens=state.summary_tokens(),
        message_tokens=state.message_tokens(),
        media_tokens=sum(media_tokens(m, state.counter) for m in state.sent()),
        estimated_tokens=estimated,
        total_tokens=calibrated(estimated, request.calibration_ratio),
        calibration_ratio=request.calibration_ratio,
    )
    if usage.total_tokens > budget.tokens:
        raise ContextInvariantError([f"total {usage.total_tokens} over budget {budget.tokens}"])
    return usage


def _result(
    request: AssemblyInput,
    rendered: Rendered,
    fixed: _Fixed,
    usage: Usage,
    state: State,
    explained: tuple[ExplainEntry, ...],
    plan: FoldPlan | None,
) -> AssemblyResult:
    """The result as sent: cache breakpoints (anthropic), the prefix chain, synthetic messages
    listed first in `explain`."""
    system_sent: str | list[dict[str, Any]] | None = rendered.system
    # At most MAX_MARKERS cache_control markers leave, in every format: the client's oldest
    # beyond that are dropped (the provider refuses the request otherwise).
    messages_sent, tools_sent, dropped = markers.drop_oldest(rendered.messages, fixed.tools)
    warnings = list(state.warnings)
    if dropped:
        warnings.append(
            f"{dropped} of the client's cache_control markers dropped, the oldest: "
            f"at most {markers.MAX_MARKERS} are accepted per request"
        )
    placed = 0
    parts = rendered.system_parts
    if request.format == "anthropic" and request.settings.cache_breakpoints:
        sources = rendered.sources
        ack = sources.index(SYNTHETIC_SUMMARY_ACK) if SYNTHETIC_SUMMARY_ACK in sources else None
        system_sent, messages_sent, placed = place_breakpoints(
            parts, messages_sent, tools_sent, summary_ack_index=ack
        )
    tokens_of = {e.id: e.tokens for e in explained}
    for source, others in rendered.merged.items():  # one output message, several sources
        tokens_of[source] += sum(tokens_of.get(other, 0) for other in others)
    head = [fixed.system_tokens + fixed.tools_tokens]
    if parts.summary:
        head.append(usage.summary_tokens)
    else:  # the summary pair, if any, is priced as its first message
        tokens_of[SYNTHETIC_SUMMARY] = usage.summary_tokens
    added = [s for s in rendered.sources if s in SYNTHETIC]
    explain = tuple(ExplainEntry(s, 0, "synthetic", 0) for s in added) + explained
    # openai's system message is the first two chain elements, not a message of the chain.
    chained = [
        (message, source)
        for message, source in zip(rendered.messages, rendered.sources, strict=True)
        if source != SYNTHETIC_SYSTEM
    ]
    chain = prefix_chain(request.format, parts, [m for m, _ in chained], fixed.tools)
    return AssemblyResult(
        system=system_sent,
        messages=messages_sent,
        tools=tools_sent,
        usage=usage,
        explain=explain,
        warnings=tuple(warnings),
        messages_included=_included(rendered, request.format),
        messages_total=len(request.messages),
        fold_plan=plan,
        pruned=tuple(e.id for e in explain if e.status == "pruned"),
        dropped=tuple(e.id for e in explain if e.status == "dropped"),
        summary_sent=state.summary,
        prefix_chain=tuple(chain),
        prefix_tokens=tuple(cumulative_tokens(head, [s for _, s in chained], tokens_of)),
        breakpoints=placed,
        sources=tuple(rendered.sources),
    )


def _included(rendered: Rendered, fmt: Format) -> int:
    """Output messages; for openai_responses (several items per stored message) and gemini
    (several results per content) the stored and synthetic messages they come from."""
    sources = rendered.sources
    if fmt == "openai_responses":
        return len(dict.fromkeys(sources))
    return len(sources) + sum(len(others) for others in rendered.merged.values())


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
        elif state.status.get(message.id) == "compacted":
            status, tokens = "compacted", message.tokens
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
