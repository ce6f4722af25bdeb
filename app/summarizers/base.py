"""The Summarizer seam: one Protocol, plain request/result data."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from typing import Any, Literal, Protocol

from app.engine.types import Message

Method = Literal["rule", "llm", "hybrid", "fallback"]
# fresh: a prompt of its own; cached_prefix: the last served context, then the instruction.
PromptKind = Literal["fresh", "cached_prefix"]


@dataclass(frozen=True, slots=True)
class ModelUsage:
    """What a model call was billed for, in the provider's tokens. `input_tokens` are the
    ones at the full price: cache reads and writes are counted apart, as providers bill them."""

    input_tokens: int = 0
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0
    output_tokens: int = 0

    def __add__(self, other: ModelUsage) -> ModelUsage:
        return ModelUsage(
            self.input_tokens + other.input_tokens,
            self.cache_read_tokens + other.cache_read_tokens,
            self.cache_write_tokens + other.cache_write_tokens,
            self.output_tokens + other.output_tokens,
        )

    @property
    def tokens_in(self) -> int:
        """Every input token, whatever its price."""
        return self.input_tokens + self.cache_read_tokens + self.cache_write_tokens


@dataclass(frozen=True, slots=True)
class CachedPrefix:
    """The context last served for the conversation's model, as it was sent (system blocks,
    tools, messages and cache markers, in `format`), and where the span to fold ends in it:
    a fold request that repeats it is billed at the provider's cache-read price."""

    format: str  # anthropic | openai | openai_responses | gemini
    model: str
    system: str | list[dict[str, Any]] | None
    messages: Sequence[dict[str, Any]]
    tools: Sequence[dict[str, Any]] | None
    keep_last: int
    """Messages at the end of `messages` that stay in the context verbatim (after the span)."""
    span_end: str
    """The start of the span's last message, as the model reads it."""


@dataclass(frozen=True, slots=True)
class SummaryRequest:
    messages: Sequence[Message]  # only messages not yet covered by previous_summary
    previous_summary: str | None
    max_summary_tokens: int
    focus: str | None = None  # user instructions: what the summary must keep
    task_pinned: bool = False  # the first user message is sent verbatim beside the summary
    prefix: CachedPrefix | None = None  # fold on it when the summarizer speaks its format
    prefix_note: str | None = None  # why there is none, when the span was never served


@dataclass(frozen=True, slots=True)
class SummaryResult:
    text: str  # already redacted, ≤ max_summary_tokens
    tokens: int
    method: Method
    model: str | None = None
    usage: ModelUsage = field(default_factory=ModelUsage)  # the LLM's; nothing for rule
    fallback: str | None = None  # why the LLM was not used, when it was asked
    cached: bool = False
    prompt: PromptKind | None = None  # how the LLM was asked (None: it was not)
    prompt_note: str | None = None  # why a fresh prompt, when a cached prefix was not used

    @property
    def tokens_in(self) -> int:
        return self.usage.tokens_in

    def usage_record(self) -> dict[str, Any] | None:
        """What the summary version keeps of the call: its usage and prompt; None when no
        model was asked (rule, an LLM strategy without a key, a summary from the cache)."""
        if self.cached or (self.prompt is None and not self.usage.tokens_in):
            return None
        return {**asdict(self.usage), "prompt": self.prompt, "prompt_note": self.prompt_note}

    @property
    def tokens_out(self) -> int:
        return self.usage.output_tokens


class Summarizer(Protocol):
    async def summarize(self, request: SummaryRequest) -> SummaryResult: ...


class SummaryCache(Protocol):
    """Content-hash cache shared by all processes (the database in production)."""

    async def get(self, key: str) -> SummaryResult | None: ...

    async def put(self, key: str, result: SummaryResult) -> None: ...
