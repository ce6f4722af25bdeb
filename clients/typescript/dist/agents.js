import { comparable, fromResponsesItems, toResponsesItem } from './agents-items.js';
import { FoldwiseClient } from './client.js';
import { ConflictError, FoldwiseError, NoMessagesError, SessionExistsError, SessionNotFoundError, } from './errors.js';
export class FoldwiseSession {
    sessionId;
    client;
    sessionOptions;
    contextOptions;
    /** How many items the last getItems served (reportUsage sends the rest of a run's input). */
    servedItems = 0;
    constructor(sessionId, options = {}) {
        this.sessionId = sessionId;
        this.client = options.client ?? new FoldwiseClient();
        this.sessionOptions = options.sessionOptions ?? {};
        this.contextOptions = {
            summary_placement: 'messages',
            ...options.contextOptions,
            format: 'openai_responses',
        };
    }
    async getSessionId() {
        return this.sessionId;
    }
    /**
     * Reports the run's first model call to POST …/usage, so the model family calibrates: its
     * input tokens, with what it carried beyond the context `getItems` served as `unserved`
     * (`agent`'s instructions and function tools, the run's input). Call it after
     * `run(agent, input, { session })`. Resolves to false, without throwing, when there is
     * nothing to report or the report fails: calibration is a bonus.
     */
    async reportUsage(agent, result) {
        const inputTokens = result.rawResponses[0]?.usage.inputTokens;
        if (!inputTokens)
            return false;
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
        }
        catch (error) {
            if (error instanceof FoldwiseError)
                return false;
            throw error;
        }
    }
    async getItems(limit) {
        this.servedItems = 0;
        if (limit !== undefined && limit <= 0)
            return [];
        let context;
        try {
            context = await this.client.context(this.sessionId, this.contextOptions);
        }
        catch (error) {
            if (error instanceof SessionNotFoundError)
                return [];
            throw error;
        }
        const items = fromResponsesItems(context.messages);
        if (typeof context.system === 'string' && context.system) {
            items.unshift({ type: 'message', role: 'system', content: context.system });
        }
        const served = limit === undefined ? items : items.slice(-limit);
        this.servedItems = served.length;
        return served;
    }
    async addItems(items) {
        if (items.length === 0)
            return;
        const messages = items.map((item) => toResponsesItem(item));
        try {
            await this.client.appendMessages(this.sessionId, messages);
        }
        catch (error) {
            if (!(error instanceof SessionNotFoundError))
                throw error;
            await this.createSession();
            await this.client.appendMessages(this.sessionId, messages);
        }
    }
    async popItem() {
        let items = [];
        while (items.length === 0) {
            // A stored message that renders to no item (an empty one) is skipped.
            try {
                items = (await this.client.popMessage(this.sessionId)).items;
            }
            catch (error) {
                if (error instanceof NoMessagesError || error instanceof SessionNotFoundError)
                    return undefined;
                // All that is left is before the clear marker: an empty session.
                if (error instanceof ConflictError && error.code === 'message_cleared')
                    return undefined;
                throw error;
            }
        }
        const newest = fromResponsesItems(items).at(-1);
        const rest = items.slice(0, -1);
        // A reasoning item only exists as the prelude of the popped item: it goes with it.
        while (rest.at(-1)?.type === 'reasoning')
            rest.pop();
        if (rest.length > 0)
            await this.client.appendMessages(this.sessionId, rest);
        return newest;
    }
    /**
     * The SDK compares stored and expected history with this before it reconciles a resumed run:
     * items reduced to what they say, as Foldwise gives back what it was given in equivalent
     * shapes (a string `content` as parts, an assistant `status`, ids and provider data kept or not).
     */
    prepareHistoryItemsForPersistenceComparison(items) {
        return items.map((item) => comparable(item));
    }
    async clearSession() {
        try {
            await this.client.clear(this.sessionId);
        }
        catch (error) {
            if (!(error instanceof SessionNotFoundError))
                throw error;
        }
    }
    async createSession() {
        try {
            await this.client.createSession({ ...this.sessionOptions, id: this.sessionId });
        }
        catch (error) {
            if (!(error instanceof SessionExistsError))
                throw error;
        }
    }
}
/** A function tool as the Responses API gets it. */
function asResponsesTool(tool) {
    const { name, description, parameters, strict } = tool;
    return { type: 'function', name, description, parameters, strict };
}
