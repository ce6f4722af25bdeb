import type { Agent, AgentInputItem, RunResult, Session } from '@openai/agents';
import { FoldwiseClient } from './client.js';
import type { ContextQuery, SessionCreate } from './types.js';
export interface FoldwiseSessionOptions {
    /** Default: `new FoldwiseClient()` (FOLDWISE_BASE_URL, FOLDWISE_API_KEY). */
    client?: FoldwiseClient;
    /** How the Foldwise session is created when it does not exist yet (`model`, `system_prompt`, …). */
    sessionOptions?: Omit<SessionCreate, 'id'>;
    /** Query of every context read (`max_tokens`, `model`, any context setting). */
    contextOptions?: Omit<ContextQuery, 'format'>;
}
export declare class FoldwiseSession implements Session {
    readonly sessionId: string;
    readonly client: FoldwiseClient;
    private readonly sessionOptions;
    private readonly contextOptions;
    /** How many items the last getItems served (reportUsage sends the rest of a run's input). */
    private servedItems;
    constructor(sessionId: string, options?: FoldwiseSessionOptions);
    getSessionId(): Promise<string>;
    /**
     * Reports the run's first model call to POST …/usage, so the model family calibrates: its
     * input tokens, with what it carried beyond the context `getItems` served as `unserved`
     * (`agent`'s instructions and function tools, the run's input). Call it after
     * `run(agent, input, { session })`. Resolves to false, without throwing, when there is
     * nothing to report or the report fails: calibration is a bonus.
     */
    reportUsage(agent: Agent<any, any>, result: RunResult<any, any>): Promise<boolean>;
    getItems(limit?: number): Promise<AgentInputItem[]>;
    addItems(items: AgentInputItem[]): Promise<void>;
    popItem(): Promise<AgentInputItem | undefined>;
    /**
     * The SDK compares stored and expected history with this before it reconciles a resumed run:
     * items reduced to what they say, as Foldwise gives back what it was given in equivalent
     * shapes (a string `content` as parts, an assistant `status`, ids and provider data kept or not).
     */
    prepareHistoryItemsForPersistenceComparison(items: AgentInputItem[]): AgentInputItem[];
    clearSession(): Promise<void>;
    private createSession;
}
