// One request, with the client's policy (the Python client's too): bearer auth, a timeout
// per attempt, and retries with backoff on 503 (the server changed nothing) and on connection
// errors and timeouts: always when the request never left, otherwise only for calls whose
// replay cannot change the result (an append is such a call, through its client_ids).
import { APIConnectionError, APITimeoutError, InternalServerError, errorFromResponse } from './errors.js';

export interface TransportOptions {
  baseUrl: string;
  apiKey: string | undefined;
  timeoutMs: number;
  maxRetries: number;
  fetch: typeof fetch;
  headers: Record<string, string>;
}

/** Per-call options of every client method. */
export interface RequestOptions {
  /** Aborts the call (and any wait between retries); the signal's reason is thrown. */
  signal?: AbortSignal;
  /** Overrides the client's `timeoutMs` for each attempt of this call. */
  timeoutMs?: number;
  /** Overrides the client's `maxRetries` for this call. */
  maxRetries?: number;
}

export type QueryValue = string | number | boolean | null | undefined;

export interface Call {
  method: 'GET' | 'POST' | 'PATCH' | 'DELETE';
  path: string;
  query?: Record<string, QueryValue> | undefined;
  body?: unknown;
  /** Safe to send again after a connection error (idempotent, or deduplicated by client_id). */
  replayable: boolean;
  /** JSONL text instead of JSON: the body sent (`request`: a string) or the body returned. */
  jsonl?: 'request' | 'response';
}

// Backoff: 250 ms doubling to at most 10 s, each wait jittered to 50-100% of its value so
// clients that failed together do not come back together.
const BACKOFF_BASE_MS = 250;
const JSONL = 'application/x-ndjson';
const BACKOFF_CAP_MS = 10_000;
// A longer Retry-After is cut to this (the server sends 1 s with its 503s).
const RETRY_AFTER_CAP_MS = 10_000;
// Errors whose request cannot have reached the server: always safe to retry.
const NOT_SENT = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN']);

export class Transport {
  constructor(private readonly options: TransportOptions) {}

  async request<T>(call: Call, options: RequestOptions = {}): Promise<T> {
    const maxRetries = options.maxRetries ?? this.options.maxRetries;
    for (let attempt = 0; ; attempt++) {
      let status: number;
      let text: string;
      let retryAfter: string | null;
      try {
        ({ status, text, retryAfter } = await this.attempt(call, options));
      } catch (error) {
        if (!(error instanceof APIConnectionError)) throw error;
        if (attempt >= maxRetries || !(call.replayable || notSent(error))) throw error;
        await sleep(backoff(attempt), options.signal);
        continue;
      }
      if (status >= 200 && status < 300) {
        return call.jsonl === 'response' ? (text as T) : parseBody<T>(status, text);
      }
      if (status === 503 && attempt < maxRetries) {
        await sleep(retryAfterMs(retryAfter) ?? backoff(attempt), options.signal);
        continue;
      }
      throw errorFromResponse(status, text);
    }
  }

  private async attempt(
    call: Call,
    options: RequestOptions,
  ): Promise<{ status: number; text: string; retryAfter: string | null }> {
    const timeoutMs = options.timeoutMs ?? this.options.timeoutMs;
    const timeout = AbortSignal.timeout(timeoutMs);
    const signal = options.signal ? AbortSignal.any([options.signal, timeout]) : timeout;
    const headers: Record<string, string> = { Accept: 'application/json', ...this.options.headers };
    if (this.options.apiKey) headers.Authorization = `Bearer ${this.options.apiKey}`;
    const jsonlBody = call.jsonl === 'request';
    if (call.body !== undefined) headers['Content-Type'] = jsonlBody ? JSONL : 'application/json';
    try {
      const response = await this.options.fetch(this.url(call), {
        method: call.method,
        headers,
        body: call.body === undefined ? undefined : jsonlBody ? String(call.body) : JSON.stringify(call.body),
        signal,
      });
      const text = await response.text();
      return { status: response.status, text, retryAfter: response.headers.get('retry-after') };
    } catch (error) {
      if (options.signal?.aborted) throw options.signal.reason;
      // The URL names the server: the first thing to check when it cannot be reached.
      const where = `${call.method} ${this.url(call)}`;
      if (timeout.aborted) {
        throw new APITimeoutError(`${where}: no response from the Foldwise server within ${timeoutMs} ms`, {
          cause: error,
        });
      }
      const cause = error instanceof Error ? connectionCause(error) : String(error);
      throw new APIConnectionError(`${where}: could not reach the Foldwise server (${cause})`, {
        cause: error,
      });
    }
  }

  private url(call: Call): string {
    const url = new URL(this.options.baseUrl.replace(/\/+$/, '') + call.path);
    for (const [key, value] of Object.entries(call.query ?? {})) {
      if (value !== undefined && value !== null) url.searchParams.set(key, String(value));
    }
    return url.toString();
  }
}

function parseBody<T>(status: number, text: string): T {
  if (status === 204 || text === '') return undefined as T;
  try {
    return JSON.parse(text) as T;
  } catch {
    throw new InternalServerError(
      status,
      'invalid_response',
      `HTTP ${status} with a body that is not JSON: ${text.slice(0, 200)}`,
    );
  }
}

/** fetch's "fetch failed" with the system error under it (ECONNREFUSED, ENOTFOUND, …). */
function connectionCause(error: Error): string {
  const code = (error.cause as { code?: unknown } | undefined)?.code;
  return typeof code === 'string' ? `${error.message}: ${code}` : error.message;
}

function notSent(error: APIConnectionError): boolean {
  const code = (error.cause as { cause?: { code?: unknown } } | undefined)?.cause?.code;
  return typeof code === 'string' && NOT_SENT.has(code);
}

function backoff(attempt: number): number {
  const ceiling = Math.min(BACKOFF_CAP_MS, BACKOFF_BASE_MS * 2 ** attempt);
  return ceiling * (0.5 + Math.random() / 2);
}

function retryAfterMs(header: string | null): number | null {
  if (header === null || !/^\d+(\.\d+)?$/.test(header.trim())) return null;
  return Math.min(RETRY_AFTER_CAP_MS, Number(header) * 1000);
}

function sleep(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal?.reason);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}
