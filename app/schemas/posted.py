"""The posted conversation every route that takes one shares: `messages` in any shape
Foldwise reads, or Gemini `contents` in their place (never both)."""

from __future__ import annotations

from typing import Any, ClassVar, Self

from pydantic import BaseModel, field_validator, model_validator

from app.schemas.input_types import MessageJson, check_tool_ids, gemini_contents


class PostedConversation(BaseModel):
    """After validation `messages` holds what was posted and `contents` is None. Subclasses
    redeclare both fields with their own size limits."""

    # Routes that pair calls with results refuse a tool id used twice (check_tool_ids).
    unique_tool_ids: ClassVar[bool] = False

    messages: list[MessageJson] | None = None
    contents: list[MessageJson] | None = None

    @field_validator("messages")
    @classmethod
    def _unique_tool_ids(cls, messages: list[dict[str, Any]] | None) -> Any:
        if cls.unique_tool_ids and messages:
            check_tool_ids(messages)
        return messages

    @model_validator(mode="after")
    def _posted(self) -> Self:
        self.messages, self.contents = gemini_contents(self.messages, self.contents), None
        return self


__all__ = ["PostedConversation"]
