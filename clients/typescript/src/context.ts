// Context results with helpers that shape them for a provider SDK's create call (as the
// Python client's anthropic_kwargs / openai_kwargs / openai_responses_kwargs do):
//   anthropic.messages.create(context.anthropicParams())
//   openai.chat.completions.create(context.openaiChatParams())
//   openai.responses.create(context.openaiResponsesParams())
// and any field can be overridden with a spread: { ...context.openaiChatParams(), temperature: 0 }.
// The helpers are non-enumerable: JSON.stringify(context) is still the wire response.

/**
 * Provider-shaped JSON, typed loosely on purpose: it spreads into the provider SDK's own
 * parameter types without a cast (Foldwise validated it against the provider's rules).
 */
export type ProviderJson = any;

export interface AnthropicParams {
  model: string;
  max_tokens: number;
  system?: string | ProviderJson[];
  messages: ProviderJson[];
  tools?: ProviderJson[];
}

export interface OpenAIChatParams {
  model: string;
  messages: ProviderJson[];
  tools?: ProviderJson[];
}

export interface OpenAIResponsesParams {
  model: string;
  instructions?: string;
  input: ProviderJson[];
  tools?: ProviderJson[];
}

export interface GeminiParams {
  model: string;
  contents: ProviderJson[];
  config?: { systemInstruction?: string; tools?: ProviderJson[] };
}

export interface ContextParams {
  /**
   * For `anthropic.messages.create(...)` of a context fetched with `format: 'anthropic'`.
   * `maxTokens` defaults to the output the budget reserved (`usage.reserved_output_tokens`),
   * `model` to the context's model; `system` and `tools` are left out when empty.
   */
  anthropicParams(options?: { maxTokens?: number; model?: string }): AnthropicParams;
  /** For `openai.chat.completions.create(...)` (`format: 'openai'`): the system prompt is messages[0]. */
  openaiChatParams(options?: { model?: string }): OpenAIChatParams;
  /** For `openai.responses.create(...)` (`format: 'openai_responses'`): instructions, input items, tools. */
  openaiResponsesParams(options?: { model?: string }): OpenAIResponsesParams;
  /** For `ai.models.generateContent(...)` of @google/genai (`format: 'gemini'`): contents, and a config with systemInstruction and tools. */
  geminiParams(options?: { model?: string }): GeminiParams;
}

interface Rendered {
  model: string;
  format: string;
  system?: string | Array<Record<string, unknown>> | null;
  messages: Array<Record<string, unknown>>;
  tools?: Array<Record<string, unknown>> | null;
  usage: { reserved_output_tokens: number };
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
  anthropicParams(this: Rendered, options: { maxTokens?: number; model?: string } = {}): AnthropicParams {
    expectFormat(this, 'anthropic', 'anthropicParams');
    const maxTokens = options.maxTokens ?? this.usage.reserved_output_tokens;
    if (!maxTokens) throw new TypeError('no output reserved (reserved_output_tokens=0): pass maxTokens');
    const params: AnthropicParams = {
      model: options.model ?? this.model,
      max_tokens: maxTokens,
      messages: this.messages,
    };
    if (this.system) params.system = this.system;
    return withTools(params, this.tools);
  },
  openaiChatParams(this: Rendered, options: { model?: string } = {}): OpenAIChatParams {
    expectFormat(this, 'openai', 'openaiChatParams');
    return withTools({ model: options.model ?? this.model, messages: this.messages }, this.tools);
  },
  openaiResponsesParams(this: Rendered, options: { model?: string } = {}): OpenAIResponsesParams {
    expectFormat(this, 'openai_responses', 'openaiResponsesParams');
    const params: OpenAIResponsesParams = { model: options.model ?? this.model, input: this.messages };
    if (typeof this.system === 'string' && this.system) params.instructions = this.system;
    return withTools(params, this.tools);
  },
  geminiParams(this: Rendered, options: { model?: string } = {}): GeminiParams {
    expectFormat(this, 'gemini', 'geminiParams');
    const config = withTools(
      typeof this.system === 'string' && this.system ? { systemInstruction: this.system } : {},
      this.tools,
    );
    const params: GeminiParams = { model: options.model ?? this.model, contents: this.messages };
    if (Object.keys(config).length > 0) params.config = config;
    return params;
  },
};

/** `data` with the provider helpers attached (non-enumerable, so JSON stays the wire shape). */
export function withParams<T extends Rendered>(data: T): T & ContextParams {
  for (const [name, helper] of Object.entries(helpers)) {
    Object.defineProperty(data, name, { value: helper, enumerable: false, configurable: true });
  }
  return data as T & ContextParams;
}
