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


def _envelopes(*statuses: int) -> dict[int | str, dict[str, Any]]:
    return {status: {"model": ErrorResponse} for status in statuses}


# OpenAPI `responses=`: every status a route can answer with the envelope. Any route: 422
# (an unknown query key), 500 (a bug) and 503 (database unavailable, request deadline).
OPERATION_ERRORS = _envelopes(422, 500, 503)
# The API routes add auth (401), sessions (404), conflicts (409) and the body limit (413).
ERROR_RESPONSES = _envelopes(401, 404, 409, 413, 422, 500, 503)
# Routes that read a JSON body: 400 when it is not UTF-8 (invalid JSON is 422).
BODY_ERRORS = _envelopes(400)
