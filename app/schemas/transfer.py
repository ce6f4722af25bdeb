"""Export / import wire models: the JSONL records of a session, and the import result.

An export is one JSON object per line, in this order: a `session` record, the `message`
records in seq order, the `summary` records in version order, the tenant's `calibration` of
the session model's family when it has one, and an `end` record with the counts and the
checksum of the session's records (a cut stream has no `end`, and is refused).
Every stored column of the three tables is carried (`tests/api/test_transfer.py` holds the
records to the models' columns), so an import rebuilds the rows as they were.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from app.schemas.input_types import Json, LastContextJson, SqlInt, Text, ToolJson
from app.schemas.sessions import SESSION_ID_PATTERN

EXPORT_FORMAT = 1
# Message ids are server-made UUIDs; an import keeps them, so they must be ones we could make.
MESSAGE_ID_PATTERN = r"^[A-Za-z0-9-]{1,36}$"

_RECORD = ConfigDict(extra="forbid", strict=True)
# Datetimes arrive as ISO text (JSON has no datetime): strict elsewhere, lax for them.
_TIME = Field(strict=False)


class SessionRecord(BaseModel):
    model_config = _RECORD

    kind: Literal["session"] = "session"
    format: Literal[1] = 1  # EXPORT_FORMAT
    id: str = Field(pattern=SESSION_ID_PATTERN)
    model: Text = Field(max_length=128)
    system_prompt: Text | None
    tools: list[ToolJson] | None
    settings: Json
    metadata: Json
    created_at: datetime = _TIME
    updated_at: datetime = _TIME
    last_seq: SqlInt
    live_tokens: SqlInt
    removed_count: SqlInt
    live_removed: SqlInt
    conversation_summary: Text | None
    summary_through_id: str | None = Field(pattern=MESSAGE_ID_PATTERN)
    summary_through_seq: SqlInt
    summary_version: SqlInt
    summary_message_count: SqlInt
    summary_tokens: SqlInt
    summary_method: Text | None = Field(max_length=16)
    cleared_through_seq: SqlInt
    last_context: LastContextJson


class MessageRecord(BaseModel):
    model_config = _RECORD

    kind: Literal["message"] = "message"
    id: str = Field(pattern=MESSAGE_ID_PATTERN)
    seq: SqlInt
    role: str
    content: Any
    name: Text | None
    tool_calls: list[Json] | None
    tool_call_id: Text | None
    metadata: Json
    token_count: SqlInt
    client_id: Text | None
    created_at: datetime = _TIME

    def posted(self) -> dict[str, Any]:
        """The message as a client posts it, for the append path's shape checks."""
        fields = ("role", "content", "name", "tool_calls", "tool_call_id", "client_id")
        shape = {key: getattr(self, key) for key in fields if getattr(self, key) is not None}
        return {**shape, "metadata": self.metadata}


class SummaryRecord(BaseModel):
    model_config = _RECORD

    kind: Literal["summary"] = "summary"
    version: SqlInt
    text: Text | None
    through_id: str | None = Field(pattern=MESSAGE_ID_PATTERN)
    through_seq: SqlInt
    message_count: SqlInt
    tokens: SqlInt
    method: Text = Field(max_length=16)
    model: Text | None = Field(max_length=128)
    tokens_in: SqlInt
    tokens_out: SqlInt
    usage: Json | None = None  # absent from exports written before it existed
    stats: Json
    created_at: datetime = _TIME


class CalibrationRecord(BaseModel):
    """The tenant's learned ratio for the session model's family (docs/reference.md
    §Calibration), so budgets match on a server that has not learned one. Not part of the
    checksum: it is the tenant's, and moves on as other sessions report usage."""

    model_config = _RECORD

    kind: Literal["calibration"] = "calibration"
    family: Text = Field(max_length=128)
    ratio: float = Field(ge=0.5, le=2.0)
    samples: SqlInt
    updated_at: datetime = _TIME


class EndRecord(BaseModel):
    model_config = _RECORD

    kind: Literal["end"] = "end"
    messages: SqlInt
    summaries: SqlInt
    checksum: str = Field(pattern=r"^[0-9a-f]{64}$")


class SessionImport(BaseModel):
    """POST /sessions/import: `created`, or `unchanged` when this tenant already holds the
    very same session (an import is idempotent by session id)."""

    id: str
    status: Literal["created", "unchanged"]
    messages: int
    summaries: int
    checksum: str = Field(description="sha256 of the session's records, as in the `end` record")
