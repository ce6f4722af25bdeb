"""Stateless summarization of a posted transcript: POST /summarize-context, `foldwise summarize`."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence
from typing import Any

from app.core.settings import Settings
from app.core.tracing import span
from app.engine.items import parse_messages
from app.engine.newest import count_all
from app.engine.types import Message
from app.services.folds import note_fallback, record_summary
from app.summarizers.base import SummaryCache, SummaryRequest
from app.summarizers.factory import open_summarizer, strategy_used
from app.tokens.counter import TiktokenCounter, counter_for
from app.tokens.registry import load_registry


def default_counter(settings: Settings) -> TiktokenCounter:
    """The counter of the configured default model: summaries are budgeted in its tokens."""
    return counter_for(load_registry(settings).get(settings.default_model))


def to_messages(
    raw_messages: Sequence[Mapping[str, Any]], counter: TiktokenCounter
) -> list[Message]:
    """Validate (InvalidMessage → 422), number and count posted messages as a stateless route
    does."""
    return count_all(parse_messages(raw_messages), counter)


async def summarize_transcript(
    messages: Sequence[Mapping[str, Any]],
    *,
    settings: Settings,
    strategy: str | None = None,
    max_summary_tokens: int | None = None,
    previous_summary: str | None = None,
    instructions: str | None = None,
    cache: SummaryCache | None = None,
    counter: TiktokenCounter | None = None,
    summarizer: str | None = None,
) -> dict[str, Any]:
    """Fold `previous_summary` + `messages` into one summary; the summarize response
    (docs/reference.md §Routes) as a dict."""
    counter = counter or default_counter(settings)
    # Validating and counting the transcript is CPU work over the whole body: off the loop.
    folded = await asyncio.to_thread(to_messages, messages, counter)
    request = SummaryRequest(
        messages=folded,
        previous_summary=previous_summary or None,
        max_summary_tokens=max_summary_tokens or settings.max_summary_tokens,
        focus=instructions or None,
    )
    async with open_summarizer(
        strategy, settings=settings, counter=counter, cache=cache, summarizer=summarizer
    ) as folding:
        with span("foldwise.summarize", session="-", strategy=strategy or "auto",
                  messages=len(folded)) as record:  # fmt: skip
            result = await folding.summarize(request)
            record_summary(record, result)
    note_fallback(result, "-")
    return {
        "summary": result.text,
        "summary_tokens": result.tokens,
        "strategy": strategy_used(result),
        "fallback": result.fallback,
        "input_messages": len(folded),
        "input_tokens": sum(m.tokens for m in folded),
        "cached": result.cached,
        "model": result.model,
        "usage": result.usage_record(),
    }
