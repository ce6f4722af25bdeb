"""Wire models of POST /assemble-context (docs/reference.md §Routes)."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from app.core.context_settings import ContextOverrides
from app.engine.render import Format
from app.schemas.context import ContextUsage, ExplainItem
from app.schemas.input_types import (
    MessageJson,
    Text,
    TokenCount,
    ToolJson,
)
from app.schemas.posted import PostedConversation


class AssembleRequest(ContextOverrides, PostedConversation):
    """POST /assemble-context: stateless, pruning and dropping only (never a summarizer)."""

    model_config = ConfigDict(extra="forbid", strict=True)  # JSON types as the schema says
    unique_tool_ids = True

    messages: list[MessageJson] = Field(default_factory=list, max_length=100_000)
    contents: list[MessageJson] | None = Field(
        None, max_length=100_000, description="Gemini contents, in place of `messages`."
    )
    system: Text | None = None
    summary: Text | None = None
    model: Text | None = Field(None, description="Default: FOLDWISE_DEFAULT_MODEL.")
    max_tokens: TokenCount | None = Field(
        None, ge=1, description="Above the model's context window, the window is the budget."
    )
    format: Format = "anthropic"
    tools: list[ToolJson] | None = None
    explain: bool = False


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
