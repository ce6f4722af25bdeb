"""Wire models of POST /count-tokens and GET /models."""

from __future__ import annotations

from typing import Self

from pydantic import BaseModel, ConfigDict, Field, model_validator

from app.schemas.input_types import MessageJson, Text, ToolJson


class CountTokensRequest(BaseModel):
    """`text`, or `messages` and/or `tools` (counted as the context's `usage` counts them)."""

    model_config = ConfigDict(extra="forbid", strict=True)

    text: Text | None = None
    messages: list[MessageJson] | None = Field(None, max_length=10_000)
    tools: list[ToolJson] | None = None
    model: Text | None = Field(None, description="Default: FOLDWISE_DEFAULT_MODEL.")

    @model_validator(mode="after")
    def _one_input(self) -> Self:
        structured = self.messages is not None or self.tools is not None
        if (self.text is None) != structured:
            raise ValueError("give either 'text', or 'messages' and/or 'tools'")
        return self


class CountTokensResponse(BaseModel):
    tokens: int
    encoding: str
    exact: bool
    model: str = Field(description="The model id asked for (or the default), as given.")
    warnings: list[str] = Field(
        default_factory=list,
        description="E.g. a model not in the registry, counted with its family's rules.",
    )


class ModelRead(BaseModel):
    model_config = ConfigDict(from_attributes=True)

    name: str
    provider: str
    context_window: int
    max_output_tokens: int
    encoding: str
    exact: bool
    retires: str | None = Field(
        description="Announced shutdown date (YYYY-MM-DD) of a deprecated model, else null."
    )
    deprecated: bool


class ModelList(BaseModel):
    models: list[ModelRead]
