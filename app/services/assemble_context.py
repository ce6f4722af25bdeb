"""POST /assemble-context: the engine over posted messages, nothing stored, no summarizer.

Messages are validated and counted like an append (with the requested model's counter), then
assembled with `summarize=never`: over budget, older content is pruned and the oldest units
are dropped. `pruned` and `dropped` name posted messages by their index.
"""

from __future__ import annotations

from app.core.context_settings import SETTINGS_KEYS, resolve_settings
from app.core.settings import Settings
from app.engine.assemble import AssemblyInput, assemble
from app.engine.shapes import validate_tools
from app.schemas.assemble_context import AssembleRequest, AssembleResponse
from app.schemas.calibration import CalibrationRead
from app.services.context_response import explain_items, usage_block
from app.services.summarize_context import to_messages
from app.tokens.counter import counter_for
from app.tokens.registry import ModelRegistry


def assemble_posted(
    body: AssembleRequest, settings: Settings, registry: ModelRegistry
) -> AssembleResponse:
    model = body.model or settings.default_model
    info = registry.get(model)
    counter = counter_for(info)
    messages = to_messages(body.messages, counter)
    tools = validate_tools(body.tools) if body.tools is not None else None
    overrides = body.model_dump(include=set(SETTINGS_KEYS), exclude_none=True)
    context_settings = resolve_settings(settings, overrides)
    result = assemble(
        AssemblyInput(
            messages=tuple(messages),
            context_window=info.context_window,
            settings=context_settings,
            system_prompt=body.system,
            tools=tuple(tools) if tools else None,
            summary=body.summary or None,
            max_tokens=body.max_tokens,
            format=body.format,
            mode="never",
        ),
        counter,
    )
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
