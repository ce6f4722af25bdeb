// Typed errors: every non-2xx answer becomes a FoldwiseError built from the server's
// envelope {"error": {"code", "message", "details"}}, as the subclass of its status family.

export class FoldwiseError extends Error {
  /** HTTP status; 0 when no response arrived (connection error, timeout). */
  readonly status: number;
  /** The envelope's machine code (`session_not_found`, …), or `http_<status>` without one. */
  readonly code: string;
  readonly details: unknown;

  constructor(message: string, status: number, code: string, details: unknown = null, options?: ErrorOptions) {
    super(message, options);
    this.name = new.target.name;
    this.status = status;
    this.code = code;
    this.details = details;
  }
}

/** 400, 405, 413, 415 and other 4xx the families below do not cover. */
export class BadRequestError extends FoldwiseError {}
/** 401 (missing or unknown API key) and 403. */
export class AuthError extends FoldwiseError {}
/** 404: an unknown session (or another tenant's), route, or nothing to pop. */
export class NotFoundError extends FoldwiseError {}
/** 409: `session_exists`, `conflict`, `no_context_served`, … */
export class ConflictError extends FoldwiseError {}
/** 422: the body or query does not match its model, or a message the providers would reject. */
export class ValidationError extends FoldwiseError {}
/** 429. */
export class RateLimitError extends FoldwiseError {}
/** 500 and other 5xx but 503. */
export class ServerError extends FoldwiseError {}
/** 503: the database is unreachable or the request timed out on the server; nothing changed. */
export class UnavailableError extends FoldwiseError {}
/** No response: refused, reset, DNS, … (`cause` has the underlying error). */
export class FoldwiseConnectionError extends FoldwiseError {}
/** No response within the client's `timeoutMs`. */
export class FoldwiseTimeoutError extends FoldwiseError {}

type ErrorClass = new (message: string, status: number, code: string, details?: unknown) => FoldwiseError;

function classFor(status: number): ErrorClass {
  if (status === 401 || status === 403) return AuthError;
  if (status === 404) return NotFoundError;
  if (status === 409) return ConflictError;
  if (status === 422) return ValidationError;
  if (status === 429) return RateLimitError;
  if (status === 503) return UnavailableError;
  if (status >= 500) return ServerError;
  return BadRequestError;
}

/** The error for a non-2xx response whose body text is `text` (an envelope, or anything else). */
export function errorFromResponse(status: number, text: string): FoldwiseError {
  const ErrorType = classFor(status);
  const envelope = parseEnvelope(text);
  if (envelope) return new ErrorType(envelope.message, status, envelope.code, envelope.details);
  const snippet = text.trim().slice(0, 200);
  return new ErrorType(snippet || `HTTP ${status}`, status, `http_${status}`, null);
}

function parseEnvelope(text: string): { code: string; message: string; details: unknown } | null {
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    return null;
  }
  const error = (body as { error?: unknown } | null)?.error as Record<string, unknown> | undefined;
  if (!error || typeof error.code !== 'string') return null;
  const message = typeof error.message === 'string' ? error.message : error.code;
  return { code: error.code, message, details: error.details ?? null };
}
