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
    config?: {
        systemInstruction?: string;
        tools?: ProviderJson[];
    };
}
export interface ContextParams {
    /**
     * For `anthropic.messages.create(...)` of a context fetched with `format: 'anthropic'`.
     * `maxTokens` defaults to the output the budget reserved (`usage.reserved_output_tokens`),
     * `model` to the context's model; `system` and `tools` are left out when empty.
     */
    anthropicParams(options?: {
        maxTokens?: number;
        model?: string;
    }): AnthropicParams;
    /** For `openai.chat.completions.create(...)` (`format: 'openai'`): the system prompt is messages[0]. */
    openaiChatParams(options?: {
        model?: string;
    }): OpenAIChatParams;
    /** For `openai.responses.create(...)` (`format: 'openai_responses'`): instructions, input items, tools. */
    openaiResponsesParams(options?: {
        model?: string;
    }): OpenAIResponsesParams;
    /** For `ai.models.generateContent(...)` of @google/genai (`format: 'gemini'`): contents, and a config with systemInstruction and tools. */
    geminiParams(options?: {
        model?: string;
    }): GeminiParams;
}
interface Rendered {
    model: string;
    format: string;
    system?: string | Array<Record<string, unknown>> | null;
    messages: Array<Record<string, unknown>>;
    tools?: Array<Record<string, unknown>> | null;
    usage: {
        reserved_output_tokens: number;
    };
}
/** `data` with the provider helpers attached (non-enumerable, so JSON stays the wire shape). */
export declare function withParams<T extends Rendered>(data: T): T & ContextParams;
export {};
