"""Counting what a client posts, as the context's `usage` counts it: POST /count-tokens and
the part of a provider request that Foldwise did not serve (POST …/usage `unserved`)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from app.core.errors import InvalidMessage
from app.engine.gemini_in import positional_ids
from app.engine.items import normalize_posted, parse_messages
from app.engine.render import Format, render
from app.engine.shapes import validate_tools
from app.services.provider_counts import ProviderCounter
from app.tokens.counter import TiktokenCounter
from app.tokens.media import MediaCount
from app.tokens.media.blocks import media_blocks
from app.tokens.registry import ModelInfo

# The shape each provider's count endpoint takes (Messages API; Responses input items).
# Gemini's `models.countTokens` is not asked (no Gemini key setting yet): Gemini counts stay
# estimates, calibrated by usage reports, and exact mode says so (`count_exactly`).
PROVIDER_FORMAT: dict[str, Format] = {"anthropic": "anthropic", "openai": "openai_responses"}


@dataclass
class PostedCount:
    tokens: int = 0
    by_provider: bool = False
    """`tokens` is the provider's own count (exact mode), not Foldwise's rule."""
    media: list[tuple[str, MediaCount]] = field(default_factory=list)
    """Each media block counted, with its path in the posted body (`messages[2].content[1]`)."""

    notes: list[str] = field(default_factory=list)

    @property
    def exact(self) -> bool:
        """Whether every media block was counted by its provider's published rule."""
        return all(count.exact for _, count in self.media)

    @property
    def warnings(self) -> list[str]:
        media = [f"{path}: {count.warning}" for path, count in self.media if count.warning]
        return media + self.notes


def count_posted(
    counter: TiktokenCounter,
    *,
    text: str | None = None,
    messages: Sequence[Mapping[str, Any]] | None = None,
    tools: Sequence[Mapping[str, Any]] | None = None,
) -> PostedCount:
    """`text` as plain text, each message with its overhead (any accepted shape, Responses
    items grouped as at append), `tools` as a request's tool list."""
    result = PostedCount(counter.count_text(text) if text else 0)
    for posted in normalize_posted(messages or [], new_id=positional_ids):
        result.tokens += counter.count_message(posted.message)
        where = f"messages[{posted.indexes[0]}]"
        for path, block in media_blocks(posted.message.content, f"{where}.content"):
            # Counted again for the report: a PDF or a clip is remembered, an image header
            # is read again (~0.1 ms).
            count = counter.count_media(block)
            if count is not None:
                result.media.append((path, count))
    if tools:
        result.tokens += counter.count_tools(validate_tools(tools))
    return result


async def count_exactly(
    provider: ProviderCounter,
    model: ModelInfo,
    counted: PostedCount,
    messages: Sequence[Mapping[str, Any]],
    tools: Sequence[Mapping[str, Any]] | None,
) -> PostedCount:
    """Exact mode: `counted` replaced by the provider's own count of the same request (the
    messages and tools rendered as its API takes them), or kept with a warning saying why."""
    if model.provider not in PROVIDER_FORMAT:  # Gemini: see PROVIDER_FORMAT
        counted.notes.append(
            f"exact mode: Foldwise cannot ask {model.provider}'s count endpoint yet; "
            "counted by Foldwise's rules (an estimate)"
        )
        return counted
    if not provider.available(model):
        counted.notes.append(
            f"exact mode: no API key for {model.provider}; counted by Foldwise's rules"
        )
        return counted
    try:
        parsed = parse_messages(messages)
    except InvalidMessage:  # e.g. a tool output without its call: the provider refuses it too
        counted.notes.append(
            "exact mode: these messages are not a request the provider takes as they are; "
            "counted by Foldwise's rules"
        )
        return counted
    rendered = render(
        parsed,
        PROVIDER_FORMAT[model.provider],
        system_prompt=None,
        summary=None,
        placement="system",
        tools=validate_tools(tools) if tools else None,
    )
    answer = await provider.count(
        model, system=rendered.system, messages=rendered.messages, tools=rendered.tools
    )
    if answer is None:
        counted.notes.append(
            f"exact mode: {model.provider}'s count endpoint did not answer; "
            "counted by Foldwise's rules"
        )
        return counted
    counted.tokens, counted.by_provider = answer.tokens, True
    return counted
