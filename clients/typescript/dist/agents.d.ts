import type { AgentInputItem, Session } from '@openai/agents';
import { FoldwiseClient } from './client.js';
import type { ContextQuery, SessionCreate } from './types.js';
export interface FoldwiseSessionOptions {
    /** Default: `new FoldwiseClient()` (FOLDWISE_BASE_URL, FOLDWISE_API_KEY). */
    client?: FoldwiseClient;
    /** The Foldwise session id; created on first use when missing. Default: one the server assigns. */
    sessionId?: string;
    /** How the session is created when it does not exist yet (`model`, `system_prompt`, `settings`, …). */
    session?: Omit<SessionCreate, 'id'>;
    /** Query of every context read (`max_tokens`, `model`, `summary_placement`, any setting). */
    context?: Omit<ContextQuery, 'format'>;
}
export declare class FoldwiseSession implements Session {
    private readonly options;
    readonly client: FoldwiseClient;
    private sessionIdPromise;
    constructor(options?: FoldwiseSessionOptions);
    /** The Foldwise session id, creating the session on the first call. */
    getSessionId(): Promise<string>;
    private ensureSession;
    /**
     * The context to send next, as Agents SDK items: a system item first when the context has
     * a system text (the session's system prompt, the summary), then the kept history.
     * With `limit`, the newest `limit` of those items.
     */
    getItems(limit?: number): Promise<AgentInputItem[]>;
    addItems(items: AgentInputItem[]): Promise<void>;
    /**
     * Removes and returns the newest item. Foldwise stores an assistant turn's items (reasoning,
     * text, calls) as one message: popping it removes the message and appends its other items
     * again, so exactly one item goes. Undefined when the session has no message.
     */
    popItem(): Promise<AgentInputItem | undefined>;
    /** Starts the context afresh (POST …/clear): stored messages stay, later contexts omit them. */
    clearSession(): Promise<void>;
}
