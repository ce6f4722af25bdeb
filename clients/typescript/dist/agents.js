import { fromResponsesItems, toResponsesItem } from './agents-items.js';
import { FoldwiseClient } from './client.js';
import { NoMessagesError, SessionExistsError } from './errors.js';
export class FoldwiseSession {
    options;
    client;
    sessionIdPromise;
    constructor(options = {}) {
        this.options = options;
        this.client = options.client ?? new FoldwiseClient();
    }
    /** The Foldwise session id, creating the session on the first call. */
    getSessionId() {
        this.sessionIdPromise ??= this.ensureSession().catch((error) => {
            this.sessionIdPromise = undefined; // the next call tries again
            throw error;
        });
        return this.sessionIdPromise;
    }
    async ensureSession() {
        const { sessionId, session = {} } = this.options;
        if (sessionId === undefined)
            return (await this.client.createSession(session)).id;
        try {
            await this.client.createSession({ ...session, id: sessionId });
        }
        catch (error) {
            if (!(error instanceof SessionExistsError))
                throw error;
        }
        return sessionId;
    }
    /**
     * The context to send next, as Agents SDK items: a system item first when the context has
     * a system text (the session's system prompt, the summary), then the kept history.
     * With `limit`, the newest `limit` of those items.
     */
    async getItems(limit) {
        if (limit !== undefined && limit <= 0)
            return [];
        const sessionId = await this.getSessionId();
        const context = await this.client.context(sessionId, {
            ...this.options.context,
            format: 'openai_responses',
        });
        const items = fromResponsesItems(context.messages);
        if (typeof context.system === 'string' && context.system) {
            items.unshift({ type: 'message', role: 'system', content: context.system });
        }
        return (limit === undefined ? items : items.slice(-limit));
    }
    async addItems(items) {
        if (items.length === 0)
            return;
        const sessionId = await this.getSessionId();
        await this.client.appendMessages(sessionId, items.map((item) => toResponsesItem(item)));
    }
    /**
     * Removes and returns the newest item. Foldwise stores an assistant turn's items (reasoning,
     * text, calls) as one message: popping it removes the message and appends its other items
     * again, so exactly one item goes. Undefined when the session has no message.
     */
    async popItem() {
        const sessionId = await this.getSessionId();
        let popped;
        try {
            popped = await this.client.popMessage(sessionId);
        }
        catch (error) {
            if (error instanceof NoMessagesError)
                return undefined;
            throw error;
        }
        const rest = popped.items.slice(0, -1);
        // A reasoning item alone cannot be stored (nor sent): it goes with the item it preceded.
        if (rest.some((item) => item.type !== 'reasoning'))
            await this.client.appendMessages(sessionId, rest);
        return fromResponsesItems(popped.items).at(-1);
    }
    /** Starts the context afresh (POST …/clear): stored messages stay, later contexts omit them. */
    async clearSession() {
        await this.client.clear(await this.getSessionId());
    }
}
