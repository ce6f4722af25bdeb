"""POST /assemble-context: the engine over posted messages, nothing stored, no summarizer.

Messages are validated and counted like an append (with the requested model's counter), then
assembled with `summarize=never`: over budget, older content is pruned and the oldest units
are dropped. `pruned` and `dropped` name posted messages by their index.
"""

from __future__ import annotations

import dataclasses

from app.core.context_settings import SETTINGS_KEYS, resolve_settings
from app.core.errors import BudgetTooSmall
from app.core.settings import Settings
from app.engine.assemble import AssemblyInput, AssemblyResult, ExplainEntry, assemble
from app.engine.budget import Usage, compute_budget, estimate_limit
from app.engine.render import Format
from app.engine.shapes import validate_tools
from app.engine.types import Message
from app.engine.validate import ContextInvariantError
from app.schemas.context import (
    AssembleRequest,
    AssembleResponse,
    CacheUsage,
    CalibrationRead,
    ContextResponse,
    ContextUsage,
    ExplainItem,
)
from app.services.calibration import calibration_read
from app.services.context import Served
from app.services.stateless_counts import count_all, count_newest, parse_messages
from app.tokens.counter import TiktokenCounter, counter_for
from app.tokens.registry import ModelRegistry


def usage_block(
    usage: Usage, calibration: CalibrationRead, cache: CacheUsage | None = None
) -> ContextUsage:
    return ContextUsage(
        context_window=usage.context_window,
        threshold=usage.threshold,
        reserved_output_tokens=usage.reserved_output_tokens,
        budget=usage.budget,
        system_tokens=usage.system_tokens,
        tools_tokens=usage.tools_tokens,
        summary_tokens=usage.summary_tokens,
        message_tokens=usage.message_tokens,
        estimated_tokens=usage.estimated_tokens,
        total_tokens=usage.total_tokens,
        calibration=calibration,
        cache=cache,
    )


def explain_items(entries: tuple[ExplainEntry, ...]) -> list[ExplainItem]:
    return [ExplainItem(id=e.id, seq=e.seq, status=e.status, tokens=e.tokens) for e in entries]


def assemble_posted(
    body: AssembleRequest, settings: Settings, registry: ModelRegistry
) -> AssembleResponse:
    model = body.model or settings.default_model
    info = registry.get(model)
    counter = counter_for(info)
    parsed = parse_messages(body.messages)
    tools = validate_tools(body.tools) if body.tools is not None else None
    overrides = body.model_dump(include=set(SETTINGS_KEYS), exclude_none=True)
    context_settings = resolve_settings(settings, overrides)
    request = AssemblyInput(
        messages=(),
        context_window=info.context_window,
        settings=context_settings,
        system_prompt=body.system,
        tools=tuple(tools) if tools else None,
        summary=body.summary or None,
        max_tokens=body.max_tokens,
        format=body.format,
        mode="never",
    )
    result = _assemble_newest(request, parsed, counter, explain=body.explain)
    response = AssembleResponse(
        model=model,
        format=body.format,
        system=result.system,
        messages=result.messages,
        tools=result.tools,
        # Stateless: no tenant history to learn from, so the raw estimate is the total.
        usage=usage_block(result.usage, CalibrationRead(family=info.family, ratio=1.0, samples=0)),
        messages_included=result.messages_included,
        messages_total=result.messages_total,
        warnings=list(result.warnings),
        pruned=sorted(int(i) for i in result.pruned),
        dropped=sorted(int(i) for i in result.dropped),
    )
    if body.explain:
        response.explain = explain_items(result.explain)
    return response


def _assemble_newest(
    request: AssemblyInput, parsed: list[Message], counter: TiktokenCounter, *, explain: bool
) -> AssemblyResult:
    """`assemble` over `parsed`, counting newest → oldest only as far as the budget can reach
    (app/services/stateless_counts.py); every message counted when that cannot be shown."""
    if not explain:
        budget = compute_budget(request.context_window, request.settings, request.max_tokens)
        messages, uncounted = count_newest(
            parsed,
            counter,
            limit=estimate_limit(budget.tokens, request.calibration_ratio),
            pin_first=request.settings.pin_first_message,
            keep_system=request.format == "raw",
            keep_recent=request.settings.keep_recent,
        )
        try:
            result = assemble(dataclasses.replace(request, messages=tuple(messages)), counter)
        except (BudgetTooSmall, ContextInvariantError):
            result = None  # decided again with every count, which raises the same or serves
        if result is not None and uncounted <= set(result.dropped):
            return result
    messages = count_all(parsed, counter)
    return assemble(dataclasses.replace(request, messages=tuple(messages)), counter)


def context_response(served: Served, fmt: Format, explain: bool) -> ContextResponse:
    """The GET …/context body (docs/reference.md §Routes) of one served context."""
    result, snapshot = served.result, served.snapshot
    response = ContextResponse(
        session_id=snapshot.external_id,
        model=served.model,
        format=fmt,
        system=result.system,
        messages=result.messages,
        tools=result.tools,
        summary=snapshot.summary,
        usage=usage_block(
            result.usage,
            calibration_read(served.family, snapshot.calibration),
            CacheUsage(
                prefix_tokens=served.cache.prefix_tokens,
                reason=served.cache.reason,
                breakpoints=served.cache.breakpoints,
            ),
        ),
        messages_included=result.messages_included,
        messages_total=snapshot.messages_total,
        summarized=served.fold is not None,
        warnings=list(result.warnings),
    )
    if explain:
        response.explain = explain_items(result.explain)
    return response
