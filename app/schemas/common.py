"""Wire shapes shared by several route groups: the error envelope and the summary object."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict


class ErrorBody(BaseModel):
    code: str
    message: str
    details: Any = None


class ErrorResponse(BaseModel):
    """Every 4xx/5xx: {"error": {"code", "message", "details"}}."""

    error: ErrorBody


class SummaryState(BaseModel):
    """A session's current summary (docs/reference.md §Concepts): null until the first fold."""

    model_config = ConfigDict(from_attributes=True)

    text: str | None
    version: int
    through_id: str | None
    through_seq: int
    message_count: int
    tokens: int
    method: str | None


# OpenAPI `responses=` for routes that can answer with the envelope.
ERROR_RESPONSES: dict[int | str, dict[str, Any]] = {
    status: {"model": ErrorResponse} for status in (401, 404, 409, 413, 422)
}
