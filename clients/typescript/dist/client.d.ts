import { type ContextParams } from './context.js';
import { type RequestOptions } from './http.js';
import type { AppendResult, AssembleRequest, AssembleResponse, ContextQuery, ContextResponse, CountTokensRequest, CountTokensResponse, ListMessagesQuery, ListSessionsQuery, ListSummariesQuery, MessageInput, MessagePage, ModelInfo, PoppedMessage, Session, SessionCreate, SessionImport, SessionPage, SessionsDeleted, SessionSummarizeRequest, SessionSummarizeResponse, SessionUpdate, StoredMessage, SummarizeRequest, SummarizeResponse, SummaryHistoryPage, TurnContext, TurnResponse, UsageReport, UsageReportResponse } from './types.js';
export interface ClientOptions {
    /** Default: `FOLDWISE_BASE_URL`, else http://127.0.0.1:8000 (`make run`). */
    baseUrl?: string;
    /** Sent as `Authorization: Bearer <key>`. Default: `FOLDWISE_API_KEY`, else none (open mode). */
    apiKey?: string;
    /** Per attempt. Default 75 s: longer than the server's own 60 s request deadline (then a 503). */
    timeoutMs?: number;
    /** Retries after a 503 or a connection error. Default 2. */
    maxRetries?: number;
    /** Default: the global fetch. */
    fetch?: typeof fetch;
    /** Extra headers on every request. */
    headers?: Record<string, string>;
}
export type Context = ContextResponse & ContextParams;
/** `turn()`: the append's result, and the context as `context()` would return it right after. */
export type Turn = Omit<TurnResponse, 'context'> & {
    context: Context;
};
export type AssembledContext = AssembleResponse & ContextParams;
export declare class FoldwiseClient {
    private readonly transport;
    constructor(options?: ClientOptions);
    private call;
    /** SessionExistsError (409) when the id is taken. Not replayed after a connection error. */
    createSession(body?: SessionCreate, options?: RequestOptions): Promise<Session>;
    /** SessionNotFoundError (404) for an unknown id, or another tenant's. */
    getSession(sessionId: string, options?: RequestOptions): Promise<Session>;
    /** One page; pass `next_cursor` back as `cursor` (or use `iterSessions`). */
    listSessions(query?: ListSessionsQuery, options?: RequestOptions): Promise<SessionPage>;
    /** Every session of the listing, page after page. */
    iterSessions(query?: ListSessionsQuery, options?: RequestOptions): AsyncGenerator<Session>;
    /** `settings` merges key by key (null removes one), `metadata` replaces, null clears a field. */
    updateSession(sessionId: string, body: SessionUpdate, options?: RequestOptions): Promise<Session>;
    /** Removes the session with its messages and summaries. */
    deleteSession(sessionId: string, options?: RequestOptions): Promise<void>;
    /** Removes this tenant's sessions whose id starts with `idPrefix`, each with all its rows. */
    deleteSessions(idPrefix: string, options?: RequestOptions): Promise<SessionsDeleted>;
    /** The session as JSONL: session, messages in seq order, summaries, an `end` with the checksum. */
    exportSession(sessionId: string, options?: RequestOptions): Promise<string>;
    /** Restores an export with its ids, seqs and summary versions; the same export again is `unchanged`. */
    importSession(jsonl: string, options?: RequestOptions): Promise<SessionImport>;
    /**
     * Appends a batch atomically. Messages without a `client_id` get a random one before the
     * first attempt, so a retry after a lost response returns the stored messages
     * (`duplicate: true`) instead of storing them twice.
     */
    appendMessages(sessionId: string, messages: readonly MessageInput[], options?: RequestOptions): Promise<AppendResult>;
    /** One page in seq order; pass `next_after_seq` back as `after_seq` (or use `iterMessages`). */
    listMessages(sessionId: string, query?: ListMessagesQuery, options?: RequestOptions): Promise<MessagePage>;
    /** Every stored message after `after_seq`, page after page. */
    iterMessages(sessionId: string, query?: ListMessagesQuery, options?: RequestOptions): AsyncGenerator<StoredMessage>;
    /**
     * Removes and returns the newest stored message (404 NotFoundError `no_messages` when there
     * is none, 409 ConflictError when a summary already covers it). Never replayed.
     */
    popMessage(sessionId: string, options?: RequestOptions): Promise<PoppedMessage>;
    /** What to send next, under the budget; `format` defaults to `anthropic`. */
    context(sessionId: string, query?: ContextQuery, options?: RequestOptions): Promise<Context>;
    /**
     * Appends `messages` and returns the context to send next, in one request: `append` as
     * `appendMessages` returns it, `context` as `context(sessionId, context)` would right after.
     * Messages without a `client_id` get a random one, so a retry stores nothing twice.
     */
    turn(sessionId: string, messages: readonly MessageInput[], context?: TurnContext, options?: RequestOptions): Promise<Turn>;
    /** Stateless: prunes and drops posted messages to the budget, never summarizes. */
    assembleContext(body: AssembleRequest, options?: RequestOptions): Promise<AssembledContext>;
    /** Folds now; `folded: false` when nothing is left to fold. Not replayed after a connection error. */
    summarize(sessionId: string, body?: SessionSummarizeRequest, options?: RequestOptions): Promise<SessionSummarizeResponse>;
    /** Summary history, newest version first. */
    listSummaries(sessionId: string, query?: ListSummariesQuery, options?: RequestOptions): Promise<SummaryHistoryPage>;
    /** Starts a fresh context: later contexts hold only messages appended after this. */
    clear(sessionId: string, options?: RequestOptions): Promise<Session>;
    /** Reports the provider's `input_tokens` for the last context served for `model` (calibration). */
    reportUsage(sessionId: string, body: UsageReport, options?: RequestOptions): Promise<UsageReportResponse>;
    /** `text`, or `messages` and/or `tools`, counted for `model`. */
    countTokens(body: CountTokensRequest, options?: RequestOptions): Promise<CountTokensResponse>;
    /** A summary of posted messages (and a previous summary); nothing stored. */
    summarizeContext(body: SummarizeRequest, options?: RequestOptions): Promise<SummarizeResponse>;
    /** The model registry's entries. */
    listModels(options?: RequestOptions): Promise<ModelInfo[]>;
}
