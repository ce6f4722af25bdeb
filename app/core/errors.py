"""Errors are classes carrying their HTTP status and machine code; one handler renders them.

`HTTPException` never appears below `app/api/`: services and repositories raise these.
"""

from __future__ import annotations

from typing import Any


class FoldwiseError(Exception):
    status_code = 400
    code = "bad_request"

    def __init__(self, message: str, details: Any = None) -> None:
        super().__init__(message)
        self.message = message
        self.details = details

    def envelope(self) -> dict[str, Any]:
        return {"error": {"code": self.code, "message": self.message, "details": self.details}}


class NotFound(FoldwiseError):
    status_code = 404
    code = "not_found"


class SessionNotFound(NotFound):
    code = "session_not_found"

    def __init__(self, session_id: str) -> None:
        super().__init__(f"session {session_id!r} does not exist", {"session_id": session_id})


class SessionExists(FoldwiseError):
    status_code = 409
    code = "session_exists"

    def __init__(self, session_id: str) -> None:
        super().__init__(f"session {session_id!r} already exists", {"session_id": session_id})


class InvalidMessage(FoldwiseError):
    status_code = 422
    code = "invalid_message"


class InvalidItem(InvalidMessage):
    """An OpenAI Responses input item Foldwise cannot store (details: index, path, reason)."""

    code = "invalid_item"


class UnknownItemType(InvalidMessage):
    code = "unknown_item_type"


class InvalidArguments(InvalidMessage):
    """A `function_call` whose `arguments` is not the JSON text of an object."""

    code = "invalid_arguments"


class UnmatchedCallOutput(InvalidMessage):
    """A `function_call_output` answering no call of the post or of the session."""

    code = "unmatched_call_output"


class DanglingReasoning(InvalidMessage):
    """A `reasoning` item posted without the message or call it precedes."""

    code = "dangling_reasoning"


class UnknownModel(FoldwiseError):
    status_code = 422
    code = "unknown_model"


class BudgetTooSmall(FoldwiseError):
    status_code = 422
    code = "budget_too_small"


class Unauthorized(FoldwiseError):
    status_code = 401
    code = "unauthorized"


class PayloadTooLarge(FoldwiseError):
    status_code = 413
    code = "payload_too_large"


class Conflict(FoldwiseError):
    status_code = 409
    code = "conflict"


class InvalidTools(FoldwiseError):
    status_code = 422
    code = "invalid_tools"


class InvalidCursor(FoldwiseError):
    status_code = 422
    code = "invalid_cursor"


class CursorMismatch(InvalidCursor):
    """A cursor issued for another sort, order or id filter than the request's."""

    code = "cursor_mismatch"


class UnknownQueryParameter(FoldwiseError):
    """A query key the route does not read (details: `unknown`, `allowed`)."""

    status_code = 422
    code = "unknown_query_parameter"


class ServiceUnavailable(FoldwiseError):
    status_code = 503
    code = "service_unavailable"


class RequestTimeout(ServiceUnavailable):
    """The request passed FOLDWISE_REQUEST_TIMEOUT_S (app/core/deadline.py)."""

    code = "request_timeout"


class NoMessages(NotFound):
    code = "no_messages"


class MessageSummarized(Conflict):
    """The newest message is already folded into the summary."""

    code = "message_summarized"


class FoldInProgress(Conflict):
    """A fold of the session is running; retry once it is done."""

    code = "fold_in_progress"


class MessageCleared(Conflict):
    """The newest message is before the clear marker."""

    code = "message_cleared"


class MessageIdsTaken(Conflict):
    """An import whose message ids (unique across the server) or client_ids are stored."""

    code = "message_ids_taken"


class InvalidExport(FoldwiseError):
    """An import that is not a whole, consistent export (details: line, reason)."""

    status_code = 422
    code = "invalid_export"
