/**
 * Provider-shaped JSON, typed loosely on purpose: it spreads into the provider SDK's own
 * parameter types without a cast (Foldwise validated it against the provider's rules).
 */
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
/** `data` with the provider helpers attached (non-enumerable, so JSON stays the wire shape). */
export declare function withParams<T extends Rendered>(data: T): T & ContextParams;
export {};
