// FoldwiseSession: the OpenAI Agents SDK's `Session` over a Foldwise session. getItems() is
// the context Foldwise serves (older turns folded into a summary, the rest under the budget),
// not the whole stored history; addItems() appends; popItem() and clearSession() use
// DELETE …/messages/last and POST …/clear. Only types come from @openai/agents.
import type { AgentInputItem, Session } from '@openai/agents';
import { fromResponsesItems, toResponsesItem } from './agents-items.js';
import { FoldwiseClient } from './client.js';
import { NoMessagesError, SessionExistsError } from './errors.js';
import type { ContextQuery, MessageInput, SessionCreate } from './types.js';

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

export class FoldwiseSession implements Session {
  readonly client: FoldwiseClient;
  private sessionIdPromise: Promise<string> | undefined;

  constructor(private readonly options: FoldwiseSessionOptions = {}) {
    this.client = options.client ?? new FoldwiseClient();
  }

  /** The Foldwise session id, creating the session on the first call. */
  getSessionId(): Promise<string> {
    this.sessionIdPromise ??= this.ensureSession().catch((error: unknown) => {
      this.sessionIdPromise = undefined; // the next call tries again
      throw error;
    });
    return this.sessionIdPromise;
  }

  private async ensureSession(): Promise<string> {
    const { sessionId, session = {} } = this.options;
    if (sessionId === undefined) return (await this.client.createSession(session)).id;
    try {
      await this.client.createSession({ ...session, id: sessionId });
    } catch (error) {
      if (!(error instanceof SessionExistsError)) throw error;
    }
    return sessionId;
  }

  /**
   * The context to send next, as Agents SDK items: a system item first when the context has
   * a system text (the session's system prompt, the summary), then the kept history.
   * With `limit`, the newest `limit` of those items.
   */
  async getItems(limit?: number): Promise<AgentInputItem[]> {
    if (limit !== undefined && limit <= 0) return [];
    const sessionId = await this.getSessionId();
    const context = await this.client.context(sessionId, {
      ...this.options.context,
      format: 'openai_responses',
    });
    const items = fromResponsesItems(context.messages);
    if (typeof context.system === 'string' && context.system) {
      items.unshift({ type: 'message', role: 'system', content: context.system });
    }
    return (limit === undefined ? items : items.slice(-limit)) as AgentInputItem[];
  }

  async addItems(items: AgentInputItem[]): Promise<void> {
    if (items.length === 0) return;
    const sessionId = await this.getSessionId();
    await this.client.appendMessages(
      sessionId,
      items.map((item) => toResponsesItem(item) as MessageInput),
    );
  }

  /**
   * Removes and returns the newest item. Foldwise stores an assistant turn's items (reasoning,
   * text, calls) as one message: popping it removes the message and appends its other items
   * again, so exactly one item goes. Undefined when the session has no message.
   */
  async popItem(): Promise<AgentInputItem | undefined> {
    const sessionId = await this.getSessionId();
    let popped;
    try {
      popped = await this.client.popMessage(sessionId);
    } catch (error) {
      if (error instanceof NoMessagesError) return undefined;
      throw error;
    }
    const rest = popped.items.slice(0, -1);
    // A reasoning item alone cannot be stored (nor sent): it goes with the item it preceded.
    if (rest.some((item) => item.type !== 'reasoning')) await this.client.appendMessages(sessionId, rest);
    return fromResponsesItems(popped.items).at(-1) as AgentInputItem | undefined;
  }

  /** Starts the context afresh (POST …/clear): stored messages stay, later contexts omit them. */
  async clearSession(): Promise<void> {
    await this.client.clear(await this.getSessionId());
  }
}
