"""Python client for Foldwise: `Foldwise` (sync) and `AsyncFoldwise` (async), the same methods.

Adapters, each an optional extra: `foldwise_client.agents` (OpenAI Agents SDK `Session`),
`foldwise_client.langchain` (LangChain chat history, LangGraph `pre_model_hook`).
"""

from foldwise_client.async_client import AsyncFoldwise
from foldwise_client.client import Foldwise
from foldwise_client.context import Context, FormatMismatchError, Turn
from foldwise_client.errors import (
    APIConnectionError,
    APIStatusError,
    APITimeoutError,
    AuthenticationError,
    BadRequestError,
    ConflictError,
    FoldwiseError,
    InternalServerError,
    NoMessagesError,
    NotFoundError,
    PayloadTooLargeError,
    PermissionDeniedError,
    ServiceUnavailableError,
    SessionExistsError,
    SessionNotFoundError,
    UnprocessableEntityError,
)

__all__ = [
    "APIConnectionError",
    "APIStatusError",
    "APITimeoutError",
    "AsyncFoldwise",
    "AuthenticationError",
    "BadRequestError",
    "ConflictError",
    "Context",
    "Foldwise",
    "FoldwiseError",
    "FormatMismatchError",
    "InternalServerError",
    "NoMessagesError",
    "NotFoundError",
    "PayloadTooLargeError",
    "PermissionDeniedError",
    "ServiceUnavailableError",
    "SessionExistsError",
    "SessionNotFoundError",
    "Turn",
    "UnprocessableEntityError",
]
