export declare class FoldwiseError extends Error {
    /** HTTP status; 0 when no response arrived (connection error, timeout). */
    readonly status: number;
    /** The envelope's machine code (`session_not_found`, …), or `http_<status>` without one. */
    readonly code: string;
    readonly details: unknown;
    constructor(message: string, status: number, code: string, details?: unknown, options?: ErrorOptions);
}
/** 400, 405, 413, 415 and other 4xx the families below do not cover. */
export declare class BadRequestError extends FoldwiseError {
}
/** 401 (missing or unknown API key) and 403. */
export declare class AuthError extends FoldwiseError {
}
/** 404: an unknown session (or another tenant's), route, or nothing to pop. */
export declare class NotFoundError extends FoldwiseError {
}
/** 409: `session_exists`, `conflict`, `no_context_served`, … */
export declare class ConflictError extends FoldwiseError {
}
/** 422: the body or query does not match its model, or a message the providers would reject. */
export declare class ValidationError extends FoldwiseError {
}
/** 429. */
export declare class RateLimitError extends FoldwiseError {
}
/** 500 and other 5xx but 503. */
export declare class ServerError extends FoldwiseError {
}
/** 503: the database is unreachable or the request timed out on the server; nothing changed. */
export declare class UnavailableError extends FoldwiseError {
}
/** No response: refused, reset, DNS, … (`cause` has the underlying error). */
export declare class FoldwiseConnectionError extends FoldwiseError {
}
/** No response within the client's `timeoutMs`. */
export declare class FoldwiseTimeoutError extends FoldwiseError {
}
/** The error for a non-2xx response whose body text is `text` (an envelope, or anything else). */
export declare function errorFromResponse(status: number, text: string): FoldwiseError;
