// Context results with helpers that shape them for a provider SDK's create call:
//   anthropic.messages.create({ model, max_tokens, ...context.anthropicParams() })
//   openai.chat.completions.create({ model, ...context.openaiChatParams() })
//   openai.responses.create({ model, ...context.openaiResponsesParams() })
// The helpers are non-enumerable: JSON.stringify(context) is still the wire response.
function expectFormat(context, format, helper) {
    if (context.format !== format) {
        throw new TypeError(`${helper}() needs a context fetched with format '${format}', this one is '${context.format}'`);
    }
}
function withTools(params, tools) {
    return tools && tools.length > 0 ? { ...params, tools } : params;
}
const helpers = {
    anthropicParams() {
        expectFormat(this, 'anthropic', 'anthropicParams');
        const params = { messages: this.messages };
        if (this.system !== null && this.system !== undefined)
            params.system = this.system;
        return withTools(params, this.tools);
    },
    openaiChatParams() {
        expectFormat(this, 'openai', 'openaiChatParams');
        return withTools({ messages: this.messages }, this.tools);
    },
    openaiResponsesParams() {
        expectFormat(this, 'openai_responses', 'openaiResponsesParams');
        const params = { input: this.messages };
        if (typeof this.system === 'string')
            params.instructions = this.system;
        return withTools(params, this.tools);
    },
};
/** `data` with the provider helpers attached (non-enumerable, so JSON stays the wire shape). */
export function withParams(data) {
    for (const [name, helper] of Object.entries(helpers)) {
        Object.defineProperty(data, name, { value: helper, enumerable: false, configurable: true });
    }
    return data;
}
