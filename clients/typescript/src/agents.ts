// FoldwiseSession: the OpenAI Agents SDK's `Session` over a Foldwise session (the Python
// client's FoldwiseSession, in TypeScript). Only types come from @openai/agents.
//
// - getItems(limit) is the context Foldwise serves (format=openai_responses), not the whole
//   stored history: older turns folded into a summary, the rest under the budget. By default
//   the summary comes as a leading user/assistant pair (summary_placement=messages: the SDK
//   sends the agent's own instructions); a system prompt set on the Foldwise session comes
//   first as a system item. With `limit`, the newest `limit` items.
// - addItems(items) appends them (a client_id each, so a retried append stores once),
//   creating the Foldwise session on the first append; the server groups an assistant turn's
//   reasoning, text and calls into one stored message.
// - popItem() removes exactly one item: a stored message holding several gives its last
//   item, and the others are appended again. Folded messages cannot be popped (409).
// - clearSession() starts a fresh context (POST …/clear); stored messages stay.
// - reportUsage(agent, result) reports a run's first model call for calibration.
import type { Agent, AgentInputItem, FunctionTool, RunResult, Session } from '@openai/agents';
import { comparable, fromResponsesItems, toResponsesItem } from './agents-items.js';
import { FoldwiseClient } from './client.js';
import {
  ConflictError,
  FoldwiseError,
  NoMessagesError,
  SessionExistsError,
  SessionNotFoundError,
} from './errors.js';
import type { ContextQuery, MessageInput, SessionCreate } from './types.js';

export interface FoldwiseSessionOptions {
  /** Default: `new FoldwiseClient()` (FOLDWISE_BASE_URL, FOLDWISE_API_KEY). */
  client?: FoldwiseClient;
  /** How the Foldwise session is created when it does not exist yet (`model`, `system_prompt`, …). */
  sessionOptions?: Omit<SessionCreate, 'id'>;
  /** Query of every context read (`max_tokens`, `model`, any context setting). */
  contextOptions?: Omit<ContextQuery, 'format'>;
}

export class FoldwiseSession implements Session {
  readonly client: FoldwiseClient;
  private readonly sessionOptions: Omit<SessionCreate, 'id'>;
  private readonly contextOptions: ContextQuery;
  /** How many items the last getItems served (reportUsage sends the rest of a run's input). */
  private servedItems = 0;

  constructor(
    readonly sessionId: string,
    options: FoldwiseSessionOptions = {},
  ) {
    this.client = options.client ?? new FoldwiseClient();
    this.sessionOptions = options.sessionOptions ?? {};
    this.contextOptions = {
      summary_placement: 'messages',
      ...options.contextOptions,
      format: 'openai_responses',
    };
  }

  async getSessionId(): Promise<string> {
    return this.sessionId;
  }

  /**
   * Reports the run's first model call to POST …/usage, so the model family calibrates: its
   * input tokens, with what it carried beyond the context `getItems` served as `unserved`
   * (`agent`'s instructions and function tools, the run's input). Call it after
   * `run(agent, input, { session })`. Resolves to false, without throwing, when there is
   * nothing to report or the report fails: calibration is a bonus.
   */
  async reportUsage(agent: Agent<any, any>, result: RunResult<any, any>): Promise<boolean> {
    const inputTokens = result.rawResponses[0]?.usage.inputTokens;
    if (!inputTokens) return false;
    // The run's input starts with the history getItems served: the rest was not served.
    const input = typeof result.input === 'string' ? [{ role: 'user', content: result.input }] : result.input;
    const fresh = input.length >= this.servedItems ? input.slice(this.servedItems) : input;
    const system = await agent.getSystemPrompt(result.runContext);
    const unserved = {
      messages: fresh.map((item) => toResponsesItem(item)),
      tools: agent.tools.filter((tool) => tool.type === 'function').map(asResponsesTool),
      ...(system ? { system } : {}),
    };
    try {
      await this.client.reportUsage(this.sessionId, {
        input_tokens: inputTokens,
        model: this.contextOptions.model ?? null,
        unserved,
      });
      return true;
    } catch (error) {
      if (error instanceof FoldwiseError) return false;
      throw error;
    }
  }

  async getItems(limit?: number): Promise<AgentInputItem[]> {
    this.servedItems = 0;
    if (limit !== undefined && limit <= 0) return [];
    let context;
    try {
      context = await this.client.context(this.sessionId, this.contextOptions);
    } catch (error) {
      if (error instanceof SessionNotFoundError) return [];
      throw error;
    }
    const items = fromResponsesItems(context.messages);
    if (typeof context.system === 'string' && context.system) {
      items.unshift({ type: 'message', role: 'system', content: context.system });
    }
    const served = limit === undefined ? items : items.slice(-limit);
    this.servedItems = served.length;
    return served as AgentInputItem[];
  }

  async addItems(items: AgentInputItem[]): Promise<void> {
    if (items.length === 0) return;
    const messages = items.map((item) => toResponsesItem(item) as MessageInput);
    try {
      await this.client.appendMessages(this.sessionId, messages);
    } catch (error) {
      if (!(error instanceof SessionNotFoundError)) throw error;
      await this.createSession();
      await this.client.appendMessages(this.sessionId, messages);
    }
  }

  async popItem(): Promise<AgentInputItem | undefined> {
    let items: MessageInput[] = [];
    while (items.length === 0) {
      // A stored message that renders to no item (an empty one) is skipped.
      try {
        items = (await this.client.popMessage(this.sessionId)).items as MessageInput[];
      } catch (error) {
        if (error instanceof NoMessagesError || error instanceof SessionNotFoundError) return undefined;
        // All that is left is before the clear marker: an empty session.
        if (error instanceof ConflictError && error.code === 'message_cleared') return undefined;
        throw error;
      }
    }
    const newest = fromResponsesItems(items).at(-1) as AgentInputItem;
    const rest = items.slice(0, -1);
    // A reasoning item only exists as the prelude of the popped item: it goes with it.
    while (rest.at(-1)?.type === 'reasoning') rest.pop();
    if (rest.length > 0) await this.client.appendMessages(this.sessionId, rest);
    return newest;
  }

  /**
   * The SDK compares stored and expected history with this before it reconciles a resumed run:
   * items reduced to what they say, as Foldwise gives back what it was given in equivalent
   * shapes (a string `content` as parts, an assistant `status`, ids and provider data kept or not).
   */
  prepareHistoryItemsForPersistenceComparison(items: AgentInputItem[]): AgentInputItem[] {
    return items.map((item) => comparable(item) as AgentInputItem);
  }

  async clearSession(): Promise<void> {
    try {
      await this.client.clear(this.sessionId);
    } catch (error) {
      if (!(error instanceof SessionNotFoundError)) throw error;
    }
  }

  private async createSession(): Promise<void> {
    try {
      await this.client.createSession({ ...this.sessionOptions, id: this.sessionId });
    } catch (error) {
      if (!(error instanceof SessionExistsError)) throw error;
    }
  }
}

/** A function tool as the Responses API gets it. */
function asResponsesTool(tool: FunctionTool<any, any, any>): Record<string, unknown> {
  const { name, description, parameters, strict } = tool;
  return { type: 'function', name, description, parameters, strict };
}
