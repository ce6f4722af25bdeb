"""Errors are classes carrying their HTTP status and machine code; one handler renders them.

`HTTPException` never appears below `app/api/`: services and repositories raise these.
A subclass declares its code, and its status where it differs from its parent's:
`class NotFound(FoldwiseError, status_code=404, code="not_found")`.
"""

from __future__ import annotations

from typing import Any


class FoldwiseError(Exception):
    status_code = 400
    code = "bad_request"

    def __init_subclass__(cls, *, code: str, status_code: int | None = None) -> None:
        super().__init_subclass__()
        cls.code = code
        if status_code is not None:
            cls.status_code = status_code

    def __init__(self, message: str, details: Any = None) -> None:
        super().__init__(message)
        self.message = message
        self.details = details

    def envelope(self) -> dict[str, Any]:
        return {"error": {"code": self.code, "message": self.message, "details": self.details}}


class NotFound(FoldwiseError, status_code=404, code="not_found"):
    """A session (or what a route names in it) that does not exist for this tenant."""


class SessionNotFound(NotFound, code="session_not_found"):
    def __init__(self, session_id: str) -> None:
        super().__init__(f"session {session_id!r} does not exist", {"session_id": session_id})


class SessionExists(FoldwiseError, status_code=409, code="session_exists"):
    def __init__(self, session_id: str) -> None:
        super().__init__(f"session {session_id!r} already exists", {"session_id": session_id})


class InvalidMessage(FoldwiseError, status_code=422, code="invalid_message"):
    """A posted message Foldwise cannot store (details: index, path, reason)."""


class InvalidItem(InvalidMessage, code="invalid_item"):
    """An OpenAI Responses input item Foldwise cannot store (details: index, path, reason)."""


class UnknownItemType(InvalidMessage, code="unknown_item_type"):
    """A Responses input item of a type Foldwise does not store."""


class InvalidArguments(InvalidMessage, code="invalid_arguments"):
    """A `function_call` whose `arguments` is not the JSON text of an object."""


class UnmatchedCallOutput(InvalidMessage, code="unmatched_call_output"):
    """A `function_call_output` answering no call of the post or of the session."""


class DanglingReasoning(InvalidMessage, code="dangling_reasoning"):
    """A `reasoning` item posted without the message or call it precedes."""


class UnknownModel(FoldwiseError, status_code=422, code="unknown_model"):
    """A model the registry does not know (GET /models lists them)."""


class SummarizerNotAllowed(FoldwiseError, status_code=422, code="summarizer_not_allowed"):
    """A `summarizer` setting the server does not allow (FOLDWISE_SUMMARIZER_MODELS)."""


class BudgetTooSmall(FoldwiseError, status_code=422, code="budget_too_small"):
    """A budget that cannot hold the system prompt, the tools and a (truncated) newest turn."""


class Unauthorized(FoldwiseError, status_code=401, code="unauthorized"):
    """No API key, or one the keyring does not hold."""


class PayloadTooLarge(FoldwiseError, status_code=413, code="payload_too_large"):
    """A body over FOLDWISE_MAX_BODY_BYTES."""


class Conflict(FoldwiseError, status_code=409, code="conflict"):
    """A change the session's current state does not allow."""


class InvalidTools(FoldwiseError, status_code=422, code="invalid_tools"):
    """Tool definitions in no shape a provider accepts, or a name used twice."""


class InvalidCursor(FoldwiseError, status_code=422, code="invalid_cursor"):
    """A page cursor this service did not issue (or one for another listing)."""


class CursorMismatch(InvalidCursor, code="cursor_mismatch"):
    """A cursor issued for another sort, order or id filter than the request's."""


class UnknownQueryParameter(FoldwiseError, status_code=422, code="unknown_query_parameter"):
    """A query key the route does not read (details: `unknown`, `allowed`)."""


class ServiceUnavailable(FoldwiseError, status_code=503, code="service_unavailable"):
    """The service cannot answer now (database busy or unreachable, past the deadline)."""


class RequestTimeout(ServiceUnavailable, code="request_timeout"):
    """The request passed FOLDWISE_REQUEST_TIMEOUT_S (app/core/deadline.py)."""


class NoMessages(NotFound, code="no_messages"):
    """The session holds no message the route could act on."""


class MessageSummarized(Conflict, code="message_summarized"):
    """The newest message is already folded into the summary."""


class FoldInProgress(Conflict, code="fold_in_progress"):
    """A fold of the session is running; retry once it is done."""


class MessageCleared(Conflict, code="message_cleared"):
    """The newest message is before the clear marker."""


class MessageIdsTaken(Conflict, code="message_ids_taken"):
    """An import whose message ids (unique across the server) or client_ids are stored."""


class InvalidExport(FoldwiseError, status_code=422, code="invalid_export"):
    """An import that is not a whole, consistent export (details: line, reason)."""
