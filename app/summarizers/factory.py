"""Pick the summarizer for a strategy and a session's choice of model, and name what actually
answered (docs/reference.md §Summaries).

- The LLM is `FOLDWISE_SUMMARIZER_PROVIDER` / `_MODEL`, or a session's `summarizer` choice
  (`provider` or `provider:model`) when `allowed_summarizer` lets it: the configured one, or an
  entry of `FOLDWISE_SUMMARIZER_MODELS` (`provider:*`: any model of that provider).
- `auto` → `llm` when the chosen provider has its key, else `rule` (method "rule", and the
  response's `fallback` says "no OPENAI_API_KEY configured" so a user sees why the LLM was not
  used).
- `llm` / `hybrid` without a key, or with a choice not allowed → the rule summarizer, method
  "fallback" (the LLM was asked for and the rule summarizer answered), with the reason.
- `rule` → the rule summarizer, no fallback note.

Fallback upgrade (docs/reference.md §Summaries): a stored summary with method "fallback" needs
nothing special. The next fold that reaches the LLM receives it as its previous summary, and its
result, method "llm", replaces it.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import replace

from app.core.errors import SummarizerNotAllowed
from app.core.settings import Settings
from app.summarizers.base import Method, Summarizer, SummaryCache, SummaryRequest, SummaryResult
from app.summarizers.hybrid import HybridSummarizer
from app.summarizers.llm import LLMSummarizer
from app.summarizers.models.anthropic import AnthropicModel, anthropic_client
from app.summarizers.models.base import SummaryModel
from app.summarizers.models.openai import openai_model
from app.summarizers.rule import RuleSummarizer
from app.summarizers.summary_cache import CachingSummarizer
from app.summarizers.template import fold_instructions
from app.tokens.base import TokenCounter

# The model each provider's summarizer uses when FOLDWISE_SUMMARIZER_MODEL names none.
DEFAULT_MODELS = {
    "anthropic": "claude-haiku-4-5",
    "openai": "gpt-5-mini",
    "gemini": "gemini-2.5-flash",
}
# The variable holding each provider's key, as the no-key reason names it.
KEY_VARIABLES = {
    "anthropic": "ANTHROPIC_API_KEY",
    "openai": "OPENAI_API_KEY",
    "gemini": "GEMINI_API_KEY",
}
STRATEGIES = ("auto", "rule", "llm", "hybrid")


def no_key(provider: str) -> str:
    return f"no {KEY_VARIABLES[provider]} configured"


NO_KEY = no_key("anthropic")


def summarizer_choice(settings: Settings, summarizer: str | None) -> tuple[str, str]:
    """(provider, model) of a choice: None is the configured one; a provider alone is its
    configured model when it is the configured provider, else its default model."""
    provider, _, model = (summarizer or settings.summarizer_provider).partition(":")
    provider, model = provider.strip(), model.strip()
    if model:
        return provider, model
    if provider == settings.summarizer_provider and settings.summarizer_model:
        return provider, settings.summarizer_model
    return provider, DEFAULT_MODELS.get(provider, "")


def allowed_summarizer(settings: Settings, choice: str) -> str | None:
    """None when a session may fold with `choice`, else the one-line reason it may not."""
    provider, model = summarizer_choice(settings, choice)
    if provider not in DEFAULT_MODELS:
        known = ", ".join(DEFAULT_MODELS)
        return f"unknown summarizer provider {provider!r}; expected one of {known}"
    if model == "*":
        return f"summarizer {provider}:* names no model"
    if (provider, model) == summarizer_choice(settings, None):
        return None
    for entry in settings.summarizer_models:
        if entry == f"{provider}:*" or summarizer_choice(settings, entry) == (provider, model):
            return None
    return f"summarizer {provider}:{model} is not allowed (FOLDWISE_SUMMARIZER_MODELS)"


def require_allowed(settings: Settings, choice: str | None) -> None:
    """422 `summarizer_not_allowed` for a session or query `summarizer` the server refuses."""
    if choice is not None and (reason := allowed_summarizer(settings, choice)):
        raise SummarizerNotAllowed(reason)


def has_llm(settings: Settings, provider: str | None = None) -> bool:
    """Whether `provider` (default: the configured one) can be called: its key is set, or,
    for `openai`, an OpenAI-compatible server is (FOLDWISE_SUMMARIZER_BASE_URL)."""
    provider = provider or settings.summarizer_provider
    if provider == "openai" and settings.summarizer_base_url:
        return True
    key = {
        "anthropic": settings.anthropic_api_key,
        "openai": settings.openai_api_key,
        "gemini": settings.gemini_api_key,
    }.get(provider)
    return key is not None and bool(key.get_secret_value().strip())


def unavailable(settings: Settings, summarizer: str | None = None) -> str | None:
    """Why the LLM of this choice cannot fold (not allowed, no key), or None."""
    if summarizer is not None and (reason := allowed_summarizer(settings, summarizer)):
        return reason
    provider, _ = summarizer_choice(settings, summarizer)
    return None if has_llm(settings, provider) else no_key(provider)


def resolve_strategy(
    strategy: str | None, settings: Settings, summarizer: str | None = None
) -> str:
    """`auto` (or None: the configured default) made concrete for the chosen provider."""
    chosen = strategy or settings.strategy
    if chosen not in STRATEGIES:
        raise ValueError(f"unknown strategy {chosen!r}; expected one of {', '.join(STRATEGIES)}")
    if chosen == "auto":
        provider, _ = summarizer_choice(settings, summarizer)
        return "llm" if has_llm(settings, provider) else "rule"
    return chosen


class _RuleInstead:
    """The rule summarizer standing in for an LLM that cannot fold (no key, a choice not
    allowed), with the reason."""

    def __init__(self, rule: RuleSummarizer, method: Method, reason: str) -> None:
        self.rule = rule
        self.method = method
        self.reason = reason

    async def summarize(self, request: SummaryRequest) -> SummaryResult:
        result = await self.rule.summarize(request)
        return replace(result, method=self.method, fallback=self.reason)


def build_summarizer(
    strategy: str | None,
    *,
    settings: Settings,
    counter: TokenCounter,
    cache: SummaryCache | None = None,
    summarizer: str | None = None,
    model: SummaryModel | None = None,
) -> Summarizer:
    """The summarizer for `strategy` and a session's `summarizer` choice; an LLM one talks
    through `model`, which the caller opens and closes (`open_summarizer` does both)."""
    requested = strategy or settings.strategy
    concrete = resolve_strategy(requested, settings, summarizer)
    rule = RuleSummarizer(counter)
    reason = unavailable(settings, summarizer)
    if concrete == "rule":
        return _RuleInstead(rule, "rule", reason) if requested == "auto" and reason else rule
    if reason is not None:
        return _RuleInstead(rule, "fallback", reason)
    if model is None:
        raise ValueError(f"strategy {concrete!r} needs a summary model")
    llm = LLMSummarizer(
        settings=settings, counter=counter, model=model, instructions=fold_instructions(settings)
    )
    built: Summarizer = llm if concrete == "llm" else HybridSummarizer(llm, counter)
    if cache is not None:
        built = CachingSummarizer(
            built,
            cache,
            strategy=concrete,
            model=llm.model,
            prompt=llm.instructions.version,
            provider=model.provider,
        )
    return built


def open_model(settings: Settings, provider: str, name: str) -> SummaryModel:
    """The adapter of `provider` for model `name`, on a new SDK client its `close` closes."""
    if provider == "openai":
        return openai_model(settings, name)
    if provider == "gemini":
        # google-genai is large (~55k objects, a fifth more for every garbage collection to
        # walk): only a process that folds with Gemini imports it.
        from app.summarizers.models.gemini import GeminiModel, gemini_client

        return GeminiModel(gemini_client(settings), name)
    return AnthropicModel(anthropic_client(settings), name)


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
    summarizer: str | None = None,
) -> AsyncIterator[Summarizer]:
    """The production factory, and the one place that opens an SDK client: `build_summarizer`
    with the chosen provider's model, closed after the fold."""
    model = None
    concrete = resolve_strategy(strategy, settings, summarizer)
    if concrete != "rule" and unavailable(settings, summarizer) is None:
        model = open_model(settings, *summarizer_choice(settings, summarizer))
    try:
        yield build_summarizer(
            strategy,
            settings=settings,
            counter=counter,
            cache=cache,
            summarizer=summarizer,
            model=model,
        )
    finally:
        if model is not None:
            await model.close()
