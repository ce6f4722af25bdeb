/** Base of every error this client throws. */
export declare class FoldwiseError extends Error {
    constructor(message: string, options?: ErrorOptions);
}
/** No response: refused, reset, DNS, … (after the retries the call was eligible for; `cause` has the reason). */
export declare class APIConnectionError extends FoldwiseError {
}
/** No response within the client's `timeoutMs`. */
export declare class APITimeoutError extends APIConnectionError {
}
/** The server answered with an error status. */
export declare class APIStatusError extends FoldwiseError {
    readonly status: number;
    /** The envelope's machine code (`session_not_found`, …), or `http_<status>` without an envelope. */
    readonly code: string;
    readonly details: unknown;
    constructor(status: number, code: string, message: string, details?: unknown);
}
/** 400. */
export declare class BadRequestError extends APIStatusError {
}
/** 401 `unauthorized`: a missing or unknown API key. */
export declare class AuthenticationError extends APIStatusError {
}
/** 403. */
export declare class PermissionDeniedError extends APIStatusError {
}
/** 404. */
export declare class NotFoundError extends APIStatusError {
}
/** 404 `session_not_found` (also another tenant's session). */
export declare class SessionNotFoundError extends NotFoundError {
}
/** 404 `no_messages`: nothing to pop. */
export declare class NoMessagesError extends NotFoundError {
}
/** 409: `conflict`, `no_context_served`, … */
export declare class ConflictError extends APIStatusError {
}
/** 409 `session_exists`. */
export declare class SessionExistsError extends ConflictError {
}
/** 413: the body is over the server's FOLDWISE_MAX_BODY_BYTES. */
export declare class PayloadTooLargeError extends APIStatusError {
}
/** 422: a body, message, tool, cursor, model or budget the server refuses (see `code`, `details`). */
export declare class UnprocessableEntityError extends APIStatusError {
}
/** 429 (from a proxy in front of Foldwise; the service itself does not rate-limit). */
export declare class RateLimitError extends APIStatusError {
}
/** 500 and any other 5xx but 503. */
export declare class InternalServerError extends APIStatusError {
}
/** 503: nothing was changed (database unavailable, request timeout); thrown once the retries are spent. */
export declare class ServiceUnavailableError extends APIStatusError {
}
/** The error for a non-2xx response whose body is `text`: an envelope, or a proxy's page. */
export declare function errorFromResponse(status: number, text: string): APIStatusError;
