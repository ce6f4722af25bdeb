"""Wire models of POST /summarize-context (docs/reference.md §Routes)."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from app.core.context_settings import SUMMARIZER_PATTERN
from app.schemas.input_types import MessageJson, Text
from app.schemas.posted import PostedConversation
from app.schemas.summaries import SummaryUsage


class SummarizeRequest(PostedConversation):
    model_config = ConfigDict(extra="forbid", strict=True)

    messages: list[MessageJson] = Field(default_factory=list, max_length=10_000)
    contents: list[MessageJson] | None = Field(
        None, max_length=10_000, description="Gemini contents, in place of `messages`."
    )
    previous_summary: Text | None = None
    strategy: Literal["auto", "rule", "llm", "hybrid"] | None = Field(
        None, description="Default: FOLDWISE_STRATEGY (auto: llm with a key, else rule)."
    )
    max_summary_tokens: int | None = Field(
        None, ge=50, le=100_000, description="Default: FOLDWISE_MAX_SUMMARY_TOKENS."
    )
    instructions: Text | None = Field(None, description="What the summary must keep (a focus).")
    summarizer: str | None = Field(
        None,
        pattern=SUMMARIZER_PATTERN,
        description="`provider` or `provider:model` the server allows "
        "(FOLDWISE_SUMMARIZER_MODELS); default: FOLDWISE_SUMMARIZER_PROVIDER and _MODEL.",
    )


class SummarizeResponse(BaseModel):
    summary: str
    summary_tokens: int
    strategy: str = Field(description="What actually wrote the summary: rule, llm or hybrid.")
    fallback: str | None = Field(description="Why the LLM was not used, or null.")
    input_messages: int
    input_tokens: int
    cached: bool
    model: str | None = Field(None, description="The LLM that was asked; null for rule.")
    usage: SummaryUsage | None = Field(
        None, description="What the LLM call was billed for; null when none was made."
    )
