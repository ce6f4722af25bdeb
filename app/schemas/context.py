"""Wire models of the context routes: GET …/context, POST /assemble-context, POST …/summarize,
GET …/summaries, POST …/usage (docs/reference.md §Routes)."""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from app.core.settings import Strategy, SummaryPlacement
from app.schemas.common import SummaryState
from app.schemas.door import Json, MessageJson, Text, TokenCount, check_tool_ids

Format = Literal["anthropic", "openai", "openai_responses", "raw"]
SummarizeMode = Literal["auto", "never", "force"]
# `synthetic`: a message Foldwise adds (id = its tag: system, summary, summary_ack,
# continuation; seq 0), listed first, in output order.
ExplainStatus = Literal["included", "pruned", "truncated", "summarized", "dropped", "synthetic"]


class CalibrationRead(BaseModel):
    family: str
    ratio: float
    samples: int


class CacheUsage(BaseModel):
    prefix_tokens: int = Field(
        description="Tokens at the start of this context identical to the previous context "
        "served for this session and model (what a provider's prompt cache can read)."
    )
    reason: Literal["none", "first", "fold", "clear", "prune", "budget", "settings"] = Field(
        description="Why the previous context is not a prefix of this one: none (it is), "
        "first (no previous context), or what changed."
    )
    breakpoints: int = Field(description="cache_control markers Foldwise placed.")


class ContextUsage(BaseModel):
    context_window: int
    threshold: float
    reserved_output_tokens: int
    budget: int
    system_tokens: int
    tools_tokens: int
    summary_tokens: int
    message_tokens: int
    estimated_tokens: int = Field(description="Our raw estimate of what is sent.")
    total_tokens: int = Field(description="The estimate × calibration ratio; ≤ budget.")
    calibration: CalibrationRead
    cache: CacheUsage | None = Field(None, description="Session contexts only.")


class ExplainItem(BaseModel):
    id: str
    seq: int
    status: ExplainStatus
    tokens: int


class ContextResponse(BaseModel):
    session_id: str
    model: str
    format: Format
    system: str | list[dict[str, Any]] | None = Field(
        description="A string, or (anthropic, cache_breakpoints) one text block with a "
        "cache_control breakpoint, ready for messages.create(system=...)."
    )
    messages: list[dict[str, Any]]
    tools: list[dict[str, Any]] | None
    summary: SummaryState | None
    usage: ContextUsage
    messages_included: int
    messages_total: int
    summarized: bool
    warnings: list[str]
    explain: list[ExplainItem] | None = Field(None, description="Only with explain=true.")


class AssembleRequest(BaseModel):
    """POST /assemble-context: stateless, pruning and dropping only (never a summarizer)."""

    model_config = ConfigDict(extra="forbid")

    messages: list[MessageJson] = Field(max_length=100_000)
    system: Text | None = None
    summary: Text | None = None
    model: Text | None = Field(None, description="Default: FOLDWISE_DEFAULT_MODEL.")
    max_tokens: TokenCount | None = Field(
        None, ge=1, description="Above the model's context window, the window is the budget."
    )
    format: Format = "anthropic"
    tools: list[Json] | None = None
    threshold: float | None = Field(None, gt=0, le=1)
    reserved_output_tokens: TokenCount | None = Field(None, ge=0)
    keep_recent: TokenCount | None = Field(None, ge=0)
    pin_first_message: bool | None = None
    summary_placement: SummaryPlacement | None = None
    max_summary_tokens: TokenCount | None = Field(None, ge=50)
    fold_target: float | None = Field(None, gt=0, le=1)
    prune_target: float | None = Field(None, gt=0, le=1)
    prune_at_least: int | None = Field(None, ge=0)
    cache_breakpoints: bool | None = None
    explain: bool = False

    @field_validator("messages")
    @classmethod
    def _unique_tool_ids(cls, messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
        check_tool_ids(messages)
        return messages


class AssembleResponse(BaseModel):
    model: str
    format: Format
    system: str | list[dict[str, Any]] | None
    messages: list[dict[str, Any]]
    tools: list[dict[str, Any]] | None
    usage: ContextUsage
    messages_included: int
    messages_total: int
    warnings: list[str]
    pruned: list[int] = Field(description="Indexes of posted messages sent as an excerpt.")
    dropped: list[int] = Field(description="Indexes of posted messages left out.")
    explain: list[ExplainItem] | None = None


class SessionSummarizeRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")

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


class SummaryHistoryItem(BaseModel):
    model_config = ConfigDict(from_attributes=True)

    text: str | None
    version: int
    through_id: str | None
    through_seq: int
    message_count: int
    tokens: int
    method: str
    model: str | None
    tokens_in: int
    tokens_out: int
    stats: dict[str, Any]
    created_at: datetime


class SummaryHistoryPage(BaseModel):
    summaries: list[SummaryHistoryItem]
    next_cursor: str | None


class UsageReport(BaseModel):
    model_config = ConfigDict(extra="forbid")

    model: Text | None = Field(None, description="Default: the session's model.")
    input_tokens: TokenCount = Field(ge=1, description="What the provider counted for the context.")


class UsageReportResponse(BaseModel):
    session_id: str
    model: str
    estimated_tokens: int
    input_tokens: int
    calibration: CalibrationRead
