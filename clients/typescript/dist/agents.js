import { fromResponsesItems, toResponsesItem } from './agents-items.js';
import { FoldwiseClient } from './client.js';
import { NoMessagesError, SessionExistsError, SessionNotFoundError } from './errors.js';
export class FoldwiseSession {
    sessionId;
    client;
    sessionOptions;
    contextOptions;
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
    async getItems(limit) {
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
        return (limit === undefined ? items : items.slice(-limit));
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
        let popped;
        try {
            popped = await this.client.popMessage(this.sessionId);
        }
        catch (error) {
            if (error instanceof NoMessagesError || error instanceof SessionNotFoundError)
                return undefined;
            throw error;
        }
        const rest = popped.items.slice(0, -1);
        // A reasoning item alone cannot be stored (nor sent): it goes with the item it preceded.
        if (rest.some((item) => item.type !== 'reasoning'))
            await this.client.appendMessages(this.sessionId, rest);
        return fromResponsesItems(popped.items).at(-1);
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
