"""POST /assemble-context: the engine over posted messages, nothing stored, no summarizer.

Messages are validated and counted like an append (with the requested model's counter), then
assembled with `summarize=never`: over budget, older content is pruned and the oldest units
are dropped. `pruned` and `dropped` name posted messages by their index.
"""

from __future__ import annotations

from collections.abc import Sequence

from app.core.context_settings import SETTINGS_KEYS, resolve_settings
from app.core.settings import Settings
from app.engine.assemble import AssemblyInput
from app.engine.items import parse_messages
from app.engine.newest import assemble_newest
from app.engine.shapes import validate_tools
from app.schemas.assemble_context import AssembleRequest, AssembleResponse
from app.schemas.calibration import CalibrationRead
from app.services.context_response import explain_items, usage_block
from app.tokens.counter import counter_for
from app.tokens.registry import ModelRegistry


def assemble_posted(
    body: AssembleRequest, settings: Settings, registry: ModelRegistry
) -> AssembleResponse:
    model = body.model or settings.default_model
    info = registry.get(model)
    counter = counter_for(info)
    parsed = parse_messages(body.messages)
    starts = [int(m.id) for m in parsed]
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
    result = assemble_newest(request, parsed, counter, explain=body.explain)
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
        warnings=[info.warning, *result.warnings] if info.warning else list(result.warnings),
        pruned=_posted_indexes(result.pruned, starts, len(body.messages)),
        dropped=_posted_indexes(result.dropped, starts, len(body.messages)),
    )
    if body.explain:
        response.explain = explain_items(result.explain)
    return response


def _posted_indexes(ids: Sequence[str], starts: Sequence[int], total: int) -> list[int]:
    """Engine message ids (the index of a message's first posted entry) → every posted index
    the message holds: consecutive Responses items are grouped into one message, and the
    messages' index ranges `starts[k] .. starts[k + 1] - 1` cover the post in order."""
    ends = {start: end - 1 for start, end in zip(starts, [*starts[1:], total], strict=False)}
    return [i for first in sorted({int(i) for i in ids}) for i in range(first, ends[first] + 1)]
