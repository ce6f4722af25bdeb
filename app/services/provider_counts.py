"""Exact mode for token counts: the provider's own count endpoint, asked for one request.

`ProviderCounter.count` asks Anthropic's `POST /v1/messages/count_tokens` or OpenAI's
`POST /v1/responses/input_tokens` through the official SDKs, with no retries and one deadline
(the SDK's timeout and an `asyncio.timeout` around the call). The request is the caller's,
already in the provider's shape, and goes as given: for Anthropic, messages and tools as
`render(..., "anthropic", ...)` returns them; for OpenAI, Responses input items (`input`) and
Responses tool definitions (`tools`) as `render(..., "openai_responses", ...)` returns them
(app/engine/render.py), the system as `instructions`. It answers None whenever the provider
cannot give the count: no key for the model's provider, a connection error, an error status
(the provider refusing the request included), a timeout, a malformed reply. The caller then
counts by its own rule. A failure is one WARNING record (`provider_count_failed`: provider,
model, reason, status); never any content.

Answers are kept in a bounded LRU keyed by the sha256 of (provider, model name, system,
messages, tools) as JSON, key order kept (it is part of what the provider counts): a repeat
is answered from memory with `source="cache"`.

The SDKs log each request's options (its body: the transcript) at DEBUG; their loggers are
held at WARNING once a client is made (app/core/logging.py holds `anthropic` back too).
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import logging
from collections import OrderedDict
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal, NamedTuple, cast

import anthropic
import openai

from app.core.logging import get_logger, log_event
from app.core.settings import Settings
from app.tokens.registry import ModelInfo

if TYPE_CHECKING:
    from anthropic.types import MessageCountTokensToolParam, MessageParam
    from openai.types.responses import ResponseInputItemParam, ToolParam

log = get_logger("foldwise.provider_counts")

# SDK loggers whose DEBUG records carry request bodies.
_SDK_LOGGERS = ("anthropic", "openai")


@dataclass(frozen=True)
class ProviderCount:
    tokens: int
    source: Literal["provider", "cache"]


class MalformedReply(ValueError):
    """The provider answered 2xx without a usable `input_tokens`."""


class ProviderCounter:
    def __init__(
        self, settings: Settings, *, deadline_s: float = 5.0, cache_size: int = 4096
    ) -> None:
        if deadline_s <= 0:
            raise ValueError("deadline_s must be positive")
        if cache_size < 0:
            raise ValueError("cache_size must not be negative")
        self._settings = settings
        self._deadline_s = deadline_s
        self._cache_size = cache_size
        self._cache: OrderedDict[str, int] = OrderedDict()
        self._anthropic: anthropic.AsyncAnthropic | None = None
        self._openai: openai.AsyncOpenAI | None = None

    def available(self, model: ModelInfo) -> bool:
        """True when a key for the model's provider is configured (anthropic:
        settings.anthropic_api_key; openai: settings.openai_api_key). Never for gemini: no
        count endpoint is asked for it here, its counts stay estimates."""
        return self._key(model) is not None

    async def count(
        self,
        model: ModelInfo,
        *,
        system: str | None,
        messages: list[dict[str, Any]],
        tools: list[dict[str, Any]] | None,
    ) -> ProviderCount | None:
        """The provider's count for this request, or None when unavailable/failed/timed out
        (the caller then uses its own rule). `messages` and `tools` are in the provider's
        shape (render's `anthropic` / `openai_responses` output) and are sent as given.
        Results are cached by a sha256 content hash of (provider, model name, system,
        messages, tools) in a bounded LRU."""
        key = self._key(model)
        if key is None:
            return None
        asked = _Asked(model, system, messages, tools)
        digest = _digest(model, system, messages, tools)
        if digest is not None and digest in self._cache:
            self._cache.move_to_end(digest)
            return ProviderCount(self._cache[digest], "cache")
        try:
            async with asyncio.timeout(self._deadline_s):
                if model.provider == "anthropic":
                    tokens = await self._ask_anthropic(key, asked)
                else:
                    tokens = await self._ask_openai(key, asked)
        except Exception as exc:
            _warn(model, exc)
            return None
        if digest is not None and self._cache_size:
            self._cache[digest] = tokens
            if len(self._cache) > self._cache_size:
                self._cache.popitem(last=False)
        return ProviderCount(tokens, "provider")

    async def aclose(self) -> None:
        clients: list[anthropic.AsyncAnthropic | openai.AsyncOpenAI | None]
        clients = [self._anthropic, self._openai]
        self._anthropic = self._openai = None
        for client in clients:
            if client is not None:
                await client.close()

    def _key(self, model: ModelInfo) -> str | None:
        secret = {
            "anthropic": self._settings.anthropic_api_key,
            "openai": self._settings.openai_api_key,
        }.get(model.provider)
        value = secret.get_secret_value() if secret is not None else ""
        return value or None

    def _sdk_options(self, key: str, base_url: str | None) -> dict[str, Any]:
        """An SDK client's options: no retries (the deadline is the caller's), quiet logs."""
        _quiet_sdk_loggers()
        return {"api_key": key, "base_url": base_url, "max_retries": 0, "timeout": self._deadline_s}

    async def _ask_anthropic(self, key: str, asked: _Asked) -> int:
        if self._anthropic is None:
            options = self._sdk_options(key, self._settings.anthropic_base_url)
            self._anthropic = anthropic.AsyncAnthropic(**options)
        tools = cast("list[MessageCountTokensToolParam] | None", asked.tools)
        reply = await self._anthropic.messages.count_tokens(
            model=asked.model.name,
            messages=cast("list[MessageParam]", asked.messages),
            **_given(system=asked.system, tools=tools),
        )
        return _tokens(reply)

    async def _ask_openai(self, key: str, asked: _Asked) -> int:
        if self._openai is None:
            options = self._sdk_options(key, self._settings.openai_base_url)
            self._openai = openai.AsyncOpenAI(**options)
        reply = await self._openai.responses.input_tokens.count(
            model=asked.model.name,
            input=cast("list[ResponseInputItemParam]", asked.messages),
            **_given(instructions=asked.system, tools=cast("list[ToolParam] | None", asked.tools)),
        )
        return _tokens(reply)


class _Asked(NamedTuple):
    """What one count asks the provider: the request as its count endpoint takes it."""

    model: ModelInfo
    system: str | None
    messages: list[dict[str, Any]]
    tools: list[dict[str, Any]] | None


def _given(**options: Any) -> dict[str, Any]:
    """The options that are set: the SDKs take an omitted one as "not given", None as null."""
    return {name: value for name, value in options.items() if value is not None}


def _digest(
    model: ModelInfo,
    system: str | None,
    messages: list[dict[str, Any]],
    tools: list[dict[str, Any]] | None,
) -> str | None:
    """The cache key; None (not cached) for a request that is not plain JSON."""
    try:
        text = json.dumps(
            [model.provider, model.name, system, messages, tools],
            ensure_ascii=False,
            separators=(",", ":"),
            allow_nan=False,
        )
    except (TypeError, ValueError):
        return None
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def _tokens(reply: object) -> int:
    # The SDKs do not validate replies strictly: a missing or mistyped field passes through.
    tokens = getattr(reply, "input_tokens", None)
    if not isinstance(tokens, int) or isinstance(tokens, bool) or tokens < 0:
        raise MalformedReply("input_tokens missing or not a count")
    return tokens


def _warn(model: ModelInfo, exc: Exception) -> None:
    status = getattr(exc, "status_code", None)
    if isinstance(exc, anthropic.APITimeoutError | openai.APITimeoutError | TimeoutError):
        reason = "timeout"
    elif isinstance(exc, anthropic.APIConnectionError | openai.APIConnectionError):
        reason = "connection_error"
    elif isinstance(exc, anthropic.APIStatusError | openai.APIStatusError):
        reason = "status"
    else:
        reason = "malformed_response"
    fields: dict[str, Any] = {"provider": model.provider, "model": model.name, "reason": reason}
    if isinstance(status, int):
        fields["status"] = status
    log_event(
        log, "provider_count_failed", level=logging.WARNING, **fields, error=type(exc).__name__
    )


def _quiet_sdk_loggers() -> None:
    """The SDKs log request bodies at DEBUG (and raise their level on import when
    ANTHROPIC_LOG / OPENAI_LOG ask): hold them at WARNING, as app/core/logging.py does."""
    for name in _SDK_LOGGERS:
        logger = logging.getLogger(name)
        if logger.level < logging.WARNING:
            logger.setLevel(logging.WARNING)
