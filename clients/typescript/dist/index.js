export { FoldwiseClient } from './client.js';
export { AuthError, BadRequestError, ConflictError, FoldwiseConnectionError, FoldwiseError, FoldwiseTimeoutError, NotFoundError, RateLimitError, ServerError, UnavailableError, ValidationError, } from './errors.js';
