"""Wire models of POST /count-tokens and GET /models."""

from __future__ import annotations

from typing import Literal, Self

from pydantic import BaseModel, ConfigDict, Field, model_validator

from app.schemas.input_types import MessageJson, Text, ToolJson
from app.schemas.posted import PostedConversation


class CountTokensRequest(PostedConversation):
    """`text`, or `messages` and/or `tools` (counted as the context's `usage` counts them)."""

    model_config = ConfigDict(extra="forbid", strict=True)

    text: Text | None = None
    messages: list[MessageJson] | None = Field(None, max_length=10_000)
    contents: list[MessageJson] | None = Field(
        None, max_length=10_000, description="Gemini contents, in place of `messages`."
    )
    tools: list[ToolJson] | None = None
    model: Text | None = Field(None, description="Default: FOLDWISE_DEFAULT_MODEL.")

    @model_validator(mode="after")
    def _one_input(self) -> Self:
        structured = self.messages is not None or self.tools is not None
        if (self.text is None) != structured:
            raise ValueError("give either 'text', or 'messages' and/or 'tools'")
        return self


class MediaRead(BaseModel):
    """One image, document or audio block of the posted messages, as the provider bills it."""

    path: str = Field(description="Where it is in the body, e.g. `messages[2].content[1]`.")
    kind: str = Field(description="`image`, `document` or `audio`.")
    label: str = Field(description="What it is, e.g. `PNG image 1920×1080`, `PDF, 12 pages`.")
    tokens: int
    exact: bool = Field(description="Counted by the provider's published rule exactly.")


class CountTokensResponse(BaseModel):
    tokens: int
    encoding: str
    exact: bool = Field(
        description="True only where the tokenizer and every media rule are the provider's own."
    )
    model: str = Field(description="The model id asked for (or the default), as given.")
    media: list[MediaRead] = Field(default_factory=list)
    media_rule: str = Field(
        description="How the model's generation bills media (docs/media-counting.md)."
    )
    counted_by: Literal["rules", "provider"] = Field(
        "rules",
        description="`provider`: the provider's count endpoint answered (FOLDWISE_EXACT_COUNTS).",
    )
    warnings: list[str] = Field(
        default_factory=list,
        description="E.g. a model not in the registry, counted with its family's rules; an "
        "image given by URL, counted by a default size.",
    )


class ModelRead(BaseModel):
    model_config = ConfigDict(from_attributes=True)

    name: str
    provider: str
    context_window: int
    max_output_tokens: int
    encoding: str
    exact: bool
    media: str = Field(description="How the model bills images, PDFs and audio: a rule name.")
    retires: str | None = Field(
        description="Announced shutdown date (YYYY-MM-DD) of a deprecated model, else null."
    )
    deprecated: bool


class ModelList(BaseModel):
    models: list[ModelRead]
