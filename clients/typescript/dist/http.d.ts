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
export declare class Transport {
    private readonly options;
    constructor(options: TransportOptions);
    request<T>(call: Call, options?: RequestOptions): Promise<T>;
    private attempt;
    private url;
}
