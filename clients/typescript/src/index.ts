export { FoldwiseClient, type AssembledContext, type ClientOptions, type Context } from './client.js';
export type {
  AnthropicParams,
  ContextParams,
  OpenAIChatParams,
  OpenAIResponsesParams,
  ProviderJson,
} from './context.js';
export {
  AuthError,
  BadRequestError,
  ConflictError,
  FoldwiseConnectionError,
  FoldwiseError,
  FoldwiseTimeoutError,
  NotFoundError,
  RateLimitError,
  ServerError,
  UnavailableError,
  ValidationError,
} from './errors.js';
export type { RequestOptions } from './http.js';
export type * from './types.js';
export type { components, operations, paths } from './openapi.js';
