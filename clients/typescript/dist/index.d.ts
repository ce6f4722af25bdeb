export { FoldwiseClient, type AssembledContext, type ClientOptions, type Context, type Turn, } from './client.js';
export type { AnthropicParams, ContextParams, OpenAIChatParams, OpenAIResponsesParams, ProviderJson, } from './context.js';
export { APIConnectionError, APIStatusError, APITimeoutError, AuthenticationError, BadRequestError, ConflictError, FoldwiseError, InternalServerError, NoMessagesError, NotFoundError, PayloadTooLargeError, PermissionDeniedError, RateLimitError, ServiceUnavailableError, SessionExistsError, SessionNotFoundError, UnprocessableEntityError, } from './errors.js';
export type { RequestOptions } from './http.js';
export type * from './types.js';
export type { components, operations, paths } from './openapi.js';
