"""Session wire models: SessionCreate / SessionUpdate / SessionRead / SessionPage."""

from __future__ import annotations

from datetime import datetime
from enum import StrEnum
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from app.core.context_settings import ContextOverrides
from app.schemas.common import SummaryState
from app.schemas.input_types import Json, Text, ToolJson

# Client-chosen ids end up in URLs: keep them path-safe.
SESSION_ID_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9._:@-]{0,255}$"


class SessionSort(StrEnum):
    """Orders of GET /sessions; ties are broken by creation order (the surrogate key)."""

    updated_at = "updated_at"  # last activity: create, append, update, fold, clear
    message_count = "message_count"
    total_tokens = "total_tokens"
    summary_version = "summary_version"
    created_at = "created_at"
    id = "id"


class SortOrder(StrEnum):
    asc = "asc"
    desc = "desc"


# Days are whole; ten years bounds the date arithmetic of the retention sweep.
MAX_RETENTION_DAYS = 3650


class SessionSettings(ContextOverrides):
    """A session's `settings`: the context settings keys, and how long the session is kept.

    `retention_days` is not a context setting (it changes no context, and is no query key of
    GET …/context): it overrides FOLDWISE_RETENTION_DAYS for this session; 0 keeps it
    forever."""

    retention_days: int | None = Field(
        None,
        ge=0,
        le=MAX_RETENTION_DAYS,
        description="Delete this session after this many days without activity (0: never). "
        "Default: FOLDWISE_RETENTION_DAYS.",
    )


class SessionCreate(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)

    id: str | None = Field(None, pattern=SESSION_ID_PATTERN, description="Default: a UUID.")
    model: Text | None = Field(None, description="Default: FOLDWISE_DEFAULT_MODEL.")
    system_prompt: Text | None = None
    tools: list[ToolJson] | None = None
    settings: SessionSettings = Field(default_factory=SessionSettings)
    metadata: Json = Field(default_factory=dict)


class SessionUpdate(BaseModel):
    """Only the fields present change. `settings` merges key by key (a key set to null
    drops that override); `metadata` replaces the whole object; null clears
    `system_prompt` / `tools`."""

    model_config = ConfigDict(extra="forbid", strict=True)

    model: Text | None = None
    system_prompt: Text | None = None
    tools: list[ToolJson] | None = None
    settings: SessionSettings | None = None
    metadata: Json | None = None


class SessionRead(BaseModel):
    id: str
    model: str
    system_prompt: str | None
    tools: list[dict[str, Any]] | None
    settings: dict[str, Any]
    metadata: dict[str, Any]
    message_count: int
    total_tokens: int
    summary: SummaryState | None
    created_at: datetime
    updated_at: datetime


class SessionPage(BaseModel):
    sessions: list[SessionRead]
    next_cursor: str | None


class SessionsDeleted(BaseModel):
    deleted: int = Field(description="Sessions removed, each with every row it owns.")
