"""Stateless summarization of a posted transcript: POST /summarize-context, `foldwise summarize`."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from app.core.settings import Settings
from app.engine.shapes import normalize_message
from app.engine.types import Message
from app.summarizers.base import SummaryCache, SummaryRequest
from app.summarizers.factory import build_summarizer, has_llm, resolve_strategy, strategy_used
from app.summarizers.llm import make_client
from app.tokens.base import TokenCounter
from app.tokens.counter import TiktokenCounter, counter_for
from app.tokens.registry import load_registry


def default_counter(settings: Settings) -> TiktokenCounter:
    """The counter of the configured default model: summaries are budgeted in its tokens."""
    return counter_for(load_registry(settings).get(settings.default_model))


def to_messages(
    raw_messages: Sequence[Mapping[str, Any]], counter: TiktokenCounter
) -> list[Message]:
    """Validate (InvalidMessage → 422) and number posted messages as a stateless route does."""
    messages = []
    for index, raw in enumerate(raw_messages):
        normalized = normalize_message(raw, index)
        tokens = counter.count_message(normalized)
        messages.append(
            Message(
                id=str(index),
                seq=index + 1,
                role=normalized.role,
                content=normalized.content,
                tokens=tokens,
                name=normalized.name,
                tool_calls=normalized.tool_calls,
                tool_call_id=normalized.tool_call_id,
                metadata=normalized.metadata,
            )
        )
    return messages


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
) -> dict[str, Any]:
    """Fold `previous_summary` + `messages` into one summary; the SPEC §9 response as a dict."""
    counter = counter or default_counter(settings)
    folded = to_messages(messages, counter)
    concrete = resolve_strategy(strategy, settings)
    client = make_client(settings) if concrete != "rule" and has_llm(settings) else None
    token_counter: TokenCounter = counter
    summarizer = build_summarizer(
        strategy, settings=settings, counter=token_counter, cache=cache, client=client
    )
    request = SummaryRequest(
        messages=folded,
        previous_summary=previous_summary or None,
        max_summary_tokens=max_summary_tokens or settings.max_summary_tokens,
        focus=instructions or None,
    )
    try:
        result = await summarizer.summarize(request)
    finally:
        if client is not None:
            await client.close()
    return {
        "summary": result.text,
        "summary_tokens": result.tokens,
        "strategy": strategy_used(result),
        "fallback": result.fallback,
        "input_messages": len(folded),
        "input_tokens": sum(m.tokens for m in folded),
        "cached": result.cached,
    }
