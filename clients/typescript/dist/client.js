// FoldwiseClient: one method per route (docs/reference.md §Routes). Request and response
// fields are the wire's own (snake_case), typed from the server's OpenAPI schema.
import { withParams } from './context.js';
import { Transport } from './http.js';
const DEFAULT_BASE_URL = 'http://127.0.0.1:8000';
const DEFAULT_TIMEOUT_MS = 75_000;
const DEFAULT_MAX_RETRIES = 2;
function env(name) {
    const value = typeof process === 'undefined' ? undefined : process.env?.[name];
    return value ? value : undefined;
}
const at = (sessionId, rest = '') => `/sessions/${encodeURIComponent(sessionId)}${rest}`;
/** Copies of `messages`, each with a `client_id` (a random one where none was given). */
const withClientIds = (messages) => messages.map((message) => (message.client_id ? message : { ...message, client_id: crypto.randomUUID() }));
export class FoldwiseClient {
    transport;
    constructor(options = {}) {
        this.transport = new Transport({
            baseUrl: options.baseUrl ?? env('FOLDWISE_BASE_URL') ?? DEFAULT_BASE_URL,
            apiKey: options.apiKey ?? env('FOLDWISE_API_KEY'),
            timeoutMs: options.timeoutMs ?? DEFAULT_TIMEOUT_MS,
            maxRetries: options.maxRetries ?? DEFAULT_MAX_RETRIES,
            fetch: options.fetch ?? globalThis.fetch.bind(globalThis),
            headers: options.headers ?? {},
        });
    }
    call(call, options) {
        return this.transport.request(call, options);
    }
    // Sessions
    /** SessionExistsError (409) when the id is taken. Not replayed after a connection error. */
    createSession(body = {}, options) {
        return this.call({ method: 'POST', path: '/sessions', body, replayable: false }, options);
    }
    /** SessionNotFoundError (404) for an unknown id, or another tenant's. */
    getSession(sessionId, options) {
        return this.call({ method: 'GET', path: at(sessionId), replayable: true }, options);
    }
    /** One page; pass `next_cursor` back as `cursor` (or use `iterSessions`). */
    listSessions(query = {}, options) {
        return this.call({ method: 'GET', path: '/sessions', query, replayable: true }, options);
    }
    /** Every session of the listing, page after page. */
    async *iterSessions(query = {}, options) {
        let cursor = query.cursor ?? null;
        do {
            const page = await this.listSessions({ ...query, cursor }, options);
            yield* page.sessions;
            cursor = page.next_cursor;
        } while (cursor !== null);
    }
    /** `settings` merges key by key (null removes one), `metadata` replaces, null clears a field. */
    updateSession(sessionId, body, options) {
        return this.call({ method: 'PATCH', path: at(sessionId), body, replayable: true }, options);
    }
    /** Removes the session with its messages and summaries. */
    async deleteSession(sessionId, options) {
        await this.call({ method: 'DELETE', path: at(sessionId), replayable: true }, options);
    }
    /** Removes this tenant's sessions whose id starts with `idPrefix`, each with all its rows. */
    deleteSessions(idPrefix, options) {
        const query = { id_prefix: idPrefix };
        return this.call({ method: 'DELETE', path: '/sessions', query, replayable: true }, options);
    }
    /** The session as JSONL: session, messages in seq order, summaries, an `end` with the checksum. */
    exportSession(sessionId, options) {
        const call = {
            method: 'GET',
            path: at(sessionId, '/export'),
            jsonl: 'response',
            replayable: true,
        };
        return this.call(call, options);
    }
    /** Restores an export with its ids, seqs and summary versions; the same export again is `unchanged`. */
    importSession(jsonl, options) {
        const call = {
            method: 'POST',
            path: '/sessions/import',
            body: jsonl,
            jsonl: 'request',
            replayable: true,
        };
        return this.call(call, options);
    }
    // Messages
    /**
     * Appends a batch atomically. Messages without a `client_id` get a random one before the
     * first attempt, so a retry after a lost response returns the stored messages
     * (`duplicate: true`) instead of storing them twice.
     */
    appendMessages(sessionId, messages, options) {
        const call = {
            method: 'POST',
            path: at(sessionId, '/messages'),
            body: { messages: withClientIds(messages) },
            replayable: true,
        };
        return this.call(call, options);
    }
    /** One page in seq order; pass `next_after_seq` back as `after_seq` (or use `iterMessages`). */
    listMessages(sessionId, query = {}, options) {
        return this.call({ method: 'GET', path: at(sessionId, '/messages'), query, replayable: true }, options);
    }
    /** Every stored message after `after_seq`, page after page. */
    async *iterMessages(sessionId, query = {}, options) {
        let afterSeq = query.after_seq ?? 0;
        do {
            const page = await this.listMessages(sessionId, { ...query, after_seq: afterSeq }, options);
            yield* page.messages;
            afterSeq = page.next_after_seq;
        } while (afterSeq !== null);
    }
    /**
     * Removes and returns the newest stored message (404 NotFoundError `no_messages` when there
     * is none, 409 ConflictError when a summary already covers it). Never replayed.
     */
    popMessage(sessionId, options) {
        return this.call({ method: 'DELETE', path: at(sessionId, '/messages/last'), replayable: false }, options);
    }
    // Context
    /** What to send next, under the budget; `format` defaults to `anthropic`. */
    async context(sessionId, query = {}, options) {
        const call = { method: 'GET', path: at(sessionId, '/context'), query, replayable: true };
        return withParams(await this.call(call, options));
    }
    /**
     * Appends `messages` and returns the context to send next, in one request: `append` as
     * `appendMessages` returns it, `context` as `context(sessionId, context)` would right after.
     * Messages without a `client_id` get a random one, so a retry stores nothing twice.
     */
    async turn(sessionId, messages, context = {}, options) {
        const call = {
            method: 'POST',
            path: at(sessionId, '/turn'),
            body: { messages: withClientIds(messages), context },
            replayable: true,
        };
        const taken = await this.call(call, options);
        return { ...taken, context: withParams(taken.context) };
    }
    /** Stateless: prunes and drops posted messages to the budget, never summarizes. */
    async assembleContext(body, options) {
        const call = { method: 'POST', path: '/assemble-context', body, replayable: true };
        return withParams(await this.call(call, options));
    }
    /** Folds now; `folded: false` when nothing is left to fold. Not replayed after a connection error. */
    summarize(sessionId, body = {}, options) {
        return this.call({ method: 'POST', path: at(sessionId, '/summarize'), body, replayable: false }, options);
    }
    /** Summary history, newest version first. */
    listSummaries(sessionId, query = {}, options) {
        return this.call({ method: 'GET', path: at(sessionId, '/summaries'), query, replayable: true }, options);
    }
    /** Starts a fresh context: later contexts hold only messages appended after this. */
    clear(sessionId, options) {
        return this.call({ method: 'POST', path: at(sessionId, '/clear'), replayable: false }, options);
    }
    /** Reports the provider's `input_tokens` for the last context served for `model` (calibration). */
    reportUsage(sessionId, body, options) {
        return this.call({ method: 'POST', path: at(sessionId, '/usage'), body, replayable: false }, options);
    }
    // Stateless helpers
    /** `text`, or `messages` and/or `tools`, counted for `model`. */
    countTokens(body, options) {
        return this.call({ method: 'POST', path: '/count-tokens', body, replayable: true }, options);
    }
    /** A summary of posted messages (and a previous summary); nothing stored. */
    summarizeContext(body, options) {
        return this.call({ method: 'POST', path: '/summarize-context', body, replayable: true }, options);
    }
    /** The model registry's entries. */
    async listModels(options) {
        const list = await this.call({ method: 'GET', path: '/models', replayable: true }, options);
        return list.models;
    }
}
