"""Wire models of POST /assemble-context (docs/reference.md §Routes)."""

from __future__ import annotations

from typing import Any, Self

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from app.core.context_settings import ContextOverrides
from app.engine.render import Format
from app.schemas.context import ContextUsage, ExplainItem
from app.schemas.input_types import (
    MessageJson,
    Text,
    TokenCount,
    ToolJson,
    check_tool_ids,
    gemini_contents,
)


class AssembleRequest(ContextOverrides):
    """POST /assemble-context: stateless, pruning and dropping only (never a summarizer)."""

    model_config = ConfigDict(extra="forbid", strict=True)  # JSON types as the schema says

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

    @field_validator("messages")
    @classmethod
    def _unique_tool_ids(cls, messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
        check_tool_ids(messages)
        return messages

    @model_validator(mode="after")
    def _posted(self) -> Self:
        self.messages, self.contents = gemini_contents(self.messages, self.contents) or [], None
        return self


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
