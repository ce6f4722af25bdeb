"""Typed errors: one class per HTTP status of Foldwise's error envelope
`{"error": {"code", "message", "details"}}`, a few per `code`, and the transport failures."""

from __future__ import annotations

from typing import Any

import httpx


class FoldwiseError(Exception):
    """Base of every error this client raises."""


class APIConnectionError(FoldwiseError):
    """The server could not be reached, or the connection broke before a response arrived
    (after the retries the request was eligible for)."""


class APITimeoutError(APIConnectionError):
    """No response within the client's timeout."""


class APIStatusError(FoldwiseError):
    """The server answered with an error status."""

    def __init__(self, status: int, code: str, message: str, details: Any = None) -> None:
        super().__init__(f"{status} {code}: {message}")
        self.status = status
        self.code = code
        self.message = message
        self.details = details


class BadRequestError(APIStatusError):
    """400."""


class AuthenticationError(APIStatusError):
    """401 `unauthorized`: a missing or unknown API key."""


class PermissionDeniedError(APIStatusError):
    """403."""


class NotFoundError(APIStatusError):
    """404."""


class SessionNotFoundError(NotFoundError):
    """404 `session_not_found` (also another tenant's session)."""


class NoMessagesError(NotFoundError):
    """404 `no_messages`: nothing to pop."""


class ConflictError(APIStatusError):
    """409."""


class SessionExistsError(ConflictError):
    """409 `session_exists`."""


class PayloadTooLargeError(APIStatusError):
    """413."""


class UnprocessableEntityError(APIStatusError):
    """422: a body, message, tool, cursor or model the server refuses (see `code`, `details`)."""


class InternalServerError(APIStatusError):
    """500."""


class ServiceUnavailableError(APIStatusError):
    """503: nothing was changed; raised once the retries are spent."""


_BY_STATUS: dict[int, type[APIStatusError]] = {
    400: BadRequestError,
    401: AuthenticationError,
    403: PermissionDeniedError,
    404: NotFoundError,
    409: ConflictError,
    413: PayloadTooLargeError,
    422: UnprocessableEntityError,
    500: InternalServerError,
    503: ServiceUnavailableError,
}
_BY_CODE: dict[str, type[APIStatusError]] = {
    "session_not_found": SessionNotFoundError,
    "no_messages": NoMessagesError,
    "session_exists": SessionExistsError,
}


def error_from_response(response: httpx.Response) -> APIStatusError:
    """The typed error for an error response; a body that is not the envelope (a proxy's
    page) keeps its text as the message and `http_<status>` as the code."""
    status = response.status_code
    code, message, details = f"http_{status}", response.text[:1000], None
    try:
        body = response.json()
    except ValueError:
        body = None
    envelope = body.get("error") if isinstance(body, dict) else None
    if isinstance(envelope, dict) and isinstance(envelope.get("code"), str):
        code = envelope["code"]
        message = str(envelope.get("message", ""))
        details = envelope.get("details")
    cls = _BY_CODE.get(code) or _BY_STATUS.get(status)
    if cls is None:
        cls = InternalServerError if status >= 500 else APIStatusError
    return cls(status, code, message, details)
