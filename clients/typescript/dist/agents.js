import { comparable, fromResponsesItems, toResponsesItem } from './agents-items.js';
import { FoldwiseClient } from './client.js';
import { ConflictError, NoMessagesError, SessionExistsError, SessionNotFoundError } from './errors.js';
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
