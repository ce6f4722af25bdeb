// Context results with helpers that shape them for a provider SDK's create call:
//   anthropic.messages.create({ model, max_tokens, ...context.anthropicParams() })
//   openai.chat.completions.create({ model, ...context.openaiChatParams() })
//   openai.responses.create({ model, ...context.openaiResponsesParams() })
// The helpers are non-enumerable: JSON.stringify(context) is still the wire response.

/**
 * Provider-shaped JSON, typed loosely on purpose: it spreads into the provider SDK's own
 * parameter types without a cast (Foldwise validated it against the provider's rules).
 */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type ProviderJson = any;

export interface AnthropicParams {
  system?: string | ProviderJson[];
  messages: ProviderJson[];
  tools?: ProviderJson[];
}

export interface OpenAIChatParams {
  messages: ProviderJson[];
  tools?: ProviderJson[];
}

export interface OpenAIResponsesParams {
  instructions?: string;
  input: ProviderJson[];
  tools?: ProviderJson[];
}

export interface ContextParams {
  /** `{system?, messages, tools?}` of a context fetched with `format: 'anthropic'`. */
  anthropicParams(): AnthropicParams;
  /** `{messages, tools?}` of a context fetched with `format: 'openai'` (system is messages[0]). */
  openaiChatParams(): OpenAIChatParams;
  /** `{instructions?, input, tools?}` of a context fetched with `format: 'openai_responses'`. */
  openaiResponsesParams(): OpenAIResponsesParams;
}

interface Rendered {
  format: string;
  system?: string | Array<Record<string, unknown>> | null;
  messages: Array<Record<string, unknown>>;
  tools?: Array<Record<string, unknown>> | null;
}

function expectFormat(context: Rendered, format: string, helper: string): void {
  if (context.format !== format) {
    throw new TypeError(
      `${helper}() needs a context fetched with format '${format}', this one is '${context.format}'`,
    );
  }
}

function withTools<T extends object>(params: T, tools: Rendered['tools']): T & { tools?: ProviderJson[] } {
  return tools && tools.length > 0 ? { ...params, tools } : params;
}

const helpers: ContextParams & ThisType<Rendered> = {
  anthropicParams(this: Rendered): AnthropicParams {
    expectFormat(this, 'anthropic', 'anthropicParams');
    const params: AnthropicParams = { messages: this.messages };
    if (this.system !== null && this.system !== undefined) params.system = this.system;
    return withTools(params, this.tools);
  },
  openaiChatParams(this: Rendered): OpenAIChatParams {
    expectFormat(this, 'openai', 'openaiChatParams');
    return withTools({ messages: this.messages }, this.tools);
  },
  openaiResponsesParams(this: Rendered): OpenAIResponsesParams {
    expectFormat(this, 'openai_responses', 'openaiResponsesParams');
    const params: OpenAIResponsesParams = { input: this.messages };
    if (typeof this.system === 'string') params.instructions = this.system;
    return withTools(params, this.tools);
  },
};

/** `data` with the provider helpers attached (non-enumerable, so JSON stays the wire shape). */
export function withParams<T extends Rendered>(data: T): T & ContextParams {
  for (const [name, helper] of Object.entries(helpers)) {
    Object.defineProperty(data, name, { value: helper, enumerable: false, configurable: true });
  }
  return data as T & ContextParams;
}
