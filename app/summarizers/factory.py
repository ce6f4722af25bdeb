"""Pick the summarizer for a strategy, and name what actually answered
(docs/reference.md §Summaries).

- `auto` → `llm` when ANTHROPIC_API_KEY is set, else `rule` (method "rule", and the response's
  `fallback` says "no ANTHROPIC_API_KEY configured" so a user sees why the LLM was not used).
- `llm` / `hybrid` without a key → the rule summarizer, method "fallback" (the LLM was asked
  for and the rule summarizer answered), with the same reason.
- `rule` → the rule summarizer, no fallback note.

Fallback upgrade (docs/reference.md §Summaries): a stored summary with method "fallback" needs
nothing special. The next fold that reaches the LLM receives it as its previous summary, and its
result, method "llm", replaces it.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import replace

import anthropic

from app.core.settings import Settings
from app.summarizers.base import Method, Summarizer, SummaryCache, SummaryRequest, SummaryResult
from app.summarizers.hybrid import HybridSummarizer
from app.summarizers.llm import LLMSummarizer
from app.summarizers.models.anthropic import AnthropicModel
from app.summarizers.rule import RuleSummarizer
from app.summarizers.summary_cache import CachingSummarizer
from app.summarizers.template import fold_instructions
from app.tokens.base import TokenCounter

NO_KEY = "no ANTHROPIC_API_KEY configured"
# The model each provider's summarizer uses when FOLDWISE_SUMMARIZER_MODEL names none.
DEFAULT_MODELS = {
    "anthropic": "claude-haiku-4-5",
    "openai": "gpt-5-mini",
    "gemini": "gemini-2.5-flash",
}
STRATEGIES = ("auto", "rule", "llm", "hybrid")


def has_llm(settings: Settings) -> bool:
    key = settings.anthropic_api_key
    return key is not None and bool(key.get_secret_value().strip())


def resolve_strategy(strategy: str | None, settings: Settings) -> str:
    """`auto` (or None: the configured default) made concrete."""
    chosen = strategy or settings.strategy
    if chosen not in STRATEGIES:
        raise ValueError(f"unknown strategy {chosen!r}; expected one of {', '.join(STRATEGIES)}")
    if chosen == "auto":
        return "llm" if has_llm(settings) else "rule"
    return chosen


class _WithoutKey:
    """The rule summarizer standing in for an LLM strategy that has no key to run with."""

    def __init__(self, rule: RuleSummarizer, method: Method) -> None:
        self.rule = rule
        self.method = method

    async def summarize(self, request: SummaryRequest) -> SummaryResult:
        result = await self.rule.summarize(request)
        return replace(result, method=self.method, fallback=NO_KEY)


def anthropic_client(settings: Settings) -> anthropic.AsyncAnthropic:
    """The SDK client for the summarizers: the configured key and endpoint, few retries."""
    key = settings.anthropic_api_key.get_secret_value() if settings.anthropic_api_key else None
    return anthropic.AsyncAnthropic(
        api_key=key,
        base_url=settings.anthropic_base_url,
        max_retries=settings.summary_max_retries,
        timeout=settings.summary_timeout_s,
    )


def build_summarizer(
    strategy: str | None,
    *,
    settings: Settings,
    counter: TokenCounter,
    cache: SummaryCache | None = None,
    client: anthropic.AsyncAnthropic | None = None,
) -> Summarizer:
    """The summarizer for `strategy`; an LLM one talks through `client`, which the caller
    opens and closes (`open_summarizer` does both)."""
    requested = strategy or settings.strategy
    concrete = resolve_strategy(requested, settings)
    rule = RuleSummarizer(counter)
    if concrete == "rule":
        return _WithoutKey(rule, "rule") if requested == "auto" else rule
    if not has_llm(settings):
        return _WithoutKey(rule, "fallback")
    if client is None:
        raise ValueError(f"strategy {concrete!r} needs an Anthropic client")
    model = AnthropicModel(client, settings.summarizer_model or DEFAULT_MODELS["anthropic"])
    llm = LLMSummarizer(
        settings=settings, counter=counter, model=model, instructions=fold_instructions(settings)
    )
    summarizer: Summarizer = llm if concrete == "llm" else HybridSummarizer(llm, counter)
    if cache is not None:
        prompt = llm.instructions.version
        summarizer = CachingSummarizer(
            summarizer, cache, strategy=concrete, model=llm.model, prompt=prompt
        )
    return summarizer


def strategy_used(result: SummaryResult) -> str:
    """What actually wrote the summary: `rule` for rule and fallback results."""
    return "rule" if result.method in ("rule", "fallback") else result.method


@asynccontextmanager
async def open_summarizer(
    strategy: str | None,
    *,
    settings: Settings,
    counter: TokenCounter,
    cache: SummaryCache | None,
) -> AsyncIterator[Summarizer]:
    """The production factory, and the one place that opens an Anthropic client: `build_summarizer`
    with an SDK client that is closed after the fold."""
    concrete = resolve_strategy(strategy, settings)
    client = anthropic_client(settings) if concrete != "rule" and has_llm(settings) else None
    try:
        yield build_summarizer(
            strategy, settings=settings, counter=counter, cache=cache, client=client
        )
    finally:
        if client is not None:
            await client.close()
