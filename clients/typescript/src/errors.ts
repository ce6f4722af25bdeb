// Typed errors, named as in the Python client (clients/python): every non-2xx answer is an
// APIStatusError built from the server's envelope {"error": {"code", "message", "details"}},
// as the class of its status (or of its code, for the few codes worth catching alone).

/** Base of every error this client throws. */
export class FoldwiseError extends Error {
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = new.target.name;
  }
}

/** No response: refused, reset, DNS, … (after the retries the call was eligible for; `cause` has the reason). */
export class APIConnectionError extends FoldwiseError {}
/** No response within the client's `timeoutMs`. */
export class APITimeoutError extends APIConnectionError {}

/** The server answered with an error status. */
export class APIStatusError extends FoldwiseError {
  readonly status: number;
  /** The envelope's machine code (`session_not_found`, …), or `http_<status>` without an envelope. */
  readonly code: string;
  readonly details: unknown;

  constructor(status: number, code: string, message: string, details: unknown = null) {
    super(message);
    this.status = status;
    this.code = code;
    this.details = details;
  }
}

/** 400. */
export class BadRequestError extends APIStatusError {}
/** 401 `unauthorized`: a missing or unknown API key. */
export class AuthenticationError extends APIStatusError {}
/** 403. */
export class PermissionDeniedError extends APIStatusError {}
/** 404. */
export class NotFoundError extends APIStatusError {}
/** 404 `session_not_found` (also another tenant's session). */
export class SessionNotFoundError extends NotFoundError {}
/** 404 `no_messages`: nothing to pop. */
export class NoMessagesError extends NotFoundError {}
/** 409: `conflict`, `no_context_served`, … */
export class ConflictError extends APIStatusError {}
/** 409 `session_exists`. */
export class SessionExistsError extends ConflictError {}
/** 413: the body is over the server's FOLDWISE_MAX_BODY_BYTES. */
export class PayloadTooLargeError extends APIStatusError {}
/** 422: a body, message, tool, cursor, model or budget the server refuses (see `code`, `details`). */
export class UnprocessableEntityError extends APIStatusError {}
/** 429 (from a proxy in front of Foldwise; the service itself does not rate-limit). */
export class RateLimitError extends APIStatusError {}
/** 500 and any other 5xx but 503. */
export class InternalServerError extends APIStatusError {}
/** 503: nothing was changed (database unavailable, request timeout); thrown once the retries are spent. */
export class ServiceUnavailableError extends APIStatusError {}

type StatusErrorClass = new (
  status: number,
  code: string,
  message: string,
  details?: unknown,
) => APIStatusError;

const BY_STATUS: Record<number, StatusErrorClass> = {
  400: BadRequestError,
  401: AuthenticationError,
  403: PermissionDeniedError,
  404: NotFoundError,
  409: ConflictError,
  413: PayloadTooLargeError,
  422: UnprocessableEntityError,
  429: RateLimitError,
  500: InternalServerError,
  503: ServiceUnavailableError,
};
const BY_CODE: Record<string, StatusErrorClass> = {
  session_not_found: SessionNotFoundError,
  no_messages: NoMessagesError,
  session_exists: SessionExistsError,
};

/** The error for a non-2xx response whose body is `text`: an envelope, or a proxy's page. */
export function errorFromResponse(status: number, text: string): APIStatusError {
  const envelope = parseEnvelope(text);
  const code = envelope?.code ?? `http_${status}`;
  const ErrorClass =
    (Object.hasOwn(BY_CODE, code) ? BY_CODE[code] : undefined) ??
    BY_STATUS[status] ??
    (status >= 500 ? InternalServerError : APIStatusError);
  if (envelope) return new ErrorClass(status, code, envelope.message, envelope.details);
  return new ErrorClass(status, code, text.trim().slice(0, 1000) || `HTTP ${status}`);
}

function parseEnvelope(text: string): { code: string; message: string; details: unknown } | null {
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    return null;
  }
  const error = (body as { error?: unknown } | null)?.error as Record<string, unknown> | undefined;
  if (!error || typeof error !== 'object' || typeof error.code !== 'string') return null;
  const message = typeof error.message === 'string' ? error.message : error.code;
  return { code: error.code, message, details: error.details ?? null };
}
