"""Wire models of a session's summaries: POST …/summarize, GET …/summaries
(docs/reference.md §Routes)."""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from app.core.context_settings import Strategy
from app.schemas.common import SummaryState
from app.schemas.input_types import Text


class SessionSummarizeRequest(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)

    focus: Text | None = Field(None, max_length=4000, description="What the summary must keep.")
    strategy: Strategy | None = None
    max_summary_tokens: int | None = Field(None, ge=50, le=100_000)


class SessionSummarizeResponse(BaseModel):
    session_id: str
    folded: bool = Field(description="False when nothing was left to fold (summary unchanged).")
    messages_folded: int
    summary: SummaryState | None
    method: str | None = Field(description="What wrote the new summary; null when not folded.")
    fallback: str | None = Field(description="Why the LLM was not used, or null.")
    stats: dict[str, Any] | None


class SummaryUsage(BaseModel):
    """What the fold's model call was billed for, and how the model was asked."""

    input_tokens: int = Field(description="Input tokens at the full price.")
    cache_read_tokens: int = Field(description="Input tokens read from the provider's cache.")
    cache_write_tokens: int = Field(description="Input tokens written to the provider's cache.")
    output_tokens: int
    prompt: Literal["fresh", "cached_prefix"] | None = Field(
        description="`cached_prefix`: the last served context, then the instruction; `fresh`: "
        "a prompt of its own (null: the model failed before it was asked)."
    )
    prompt_note: str | None = Field(
        None, description="Why a fresh prompt when the conversation's prefix was not reusable."
    )


class SummaryHistoryItem(SummaryState):
    """One version of the summary: its state then, and what the fold that wrote it cost."""

    method: str
    model: str | None
    tokens_in: int = Field(description="Every input token the fold's model calls were sent.")
    tokens_out: int
    usage: SummaryUsage | None = Field(
        description="Null when no model was called (rule, or a summary from the summary cache)."
    )
    stats: dict[str, Any]
    created_at: datetime


class SummaryHistoryPage(BaseModel):
    summaries: list[SummaryHistoryItem]
    next_cursor: str | None
