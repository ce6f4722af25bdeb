// Context results with helpers that shape them for a provider SDK's create call (as the
// Python client's anthropic_kwargs / openai_kwargs / openai_responses_kwargs do):
//   anthropic.messages.create(context.anthropicParams())
//   openai.chat.completions.create(context.openaiChatParams())
//   openai.responses.create(context.openaiResponsesParams())
// and any field can be overridden with a spread: { ...context.openaiChatParams(), temperature: 0 }.
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
    anthropicParams(options = {}) {
        expectFormat(this, 'anthropic', 'anthropicParams');
        const maxTokens = options.maxTokens ?? this.usage.reserved_output_tokens;
        if (!maxTokens)
            throw new TypeError('no output reserved (reserved_output_tokens=0): pass maxTokens');
        const params = {
            model: options.model ?? this.model,
            max_tokens: maxTokens,
            messages: this.messages,
        };
        if (this.system)
            params.system = this.system;
        return withTools(params, this.tools);
    },
    openaiChatParams(options = {}) {
        expectFormat(this, 'openai', 'openaiChatParams');
        return withTools({ model: options.model ?? this.model, messages: this.messages }, this.tools);
    },
    openaiResponsesParams(options = {}) {
        expectFormat(this, 'openai_responses', 'openaiResponsesParams');
        const params = { model: options.model ?? this.model, input: this.messages };
        if (typeof this.system === 'string' && this.system)
            params.instructions = this.system;
        return withTools(params, this.tools);
    },
    geminiParams(options = {}) {
        expectFormat(this, 'gemini', 'geminiParams');
        const config = withTools(typeof this.system === 'string' && this.system ? { systemInstruction: this.system } : {}, this.tools);
        const params = { model: options.model ?? this.model, contents: this.messages };
        if (Object.keys(config).length > 0)
            params.config = config;
        return params;
    },
};
/** `data` with the provider helpers attached (non-enumerable, so JSON stays the wire shape). */
export function withParams(data) {
    for (const [name, helper] of Object.entries(helpers)) {
        Object.defineProperty(data, name, { value: helper, enumerable: false, configurable: true });
    }
    return data;
}
