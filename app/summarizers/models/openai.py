"""OpenAI through the `openai` SDK: the Responses API (`OpenAIResponsesModel`) and Chat
Completions (`OpenAIChatModel`), which OpenAI-compatible servers (vLLM, Ollama, LiteLLM,
llama.cpp) speak too.

Usage: OpenAI counts every prompt token in `input_tokens` / `prompt_tokens`, the cached ones
among them (`cached_tokens`), and bills no cache writes, so `ModelUsage.input_tokens` is the
difference and `cache_write_tokens` stays 0.

A compatible server folds only fresh prompts (`formats` is empty): a served context names the
conversation's model at its provider, which the server behind `FOLDWISE_SUMMARIZER_BASE_URL`
rarely has, and a request naming a model it lacks would fail every fold.
"""

from __future__ import annotations

from typing import Any, Literal

import openai
from openai.types.chat import ChatCompletion
from openai.types.responses import Response

from app.core.settings import Settings
from app.summarizers.base import CachedPrefix, ModelUsage
from app.summarizers.models.base import Prompt, Reply, repeat_prefix, user_turn

# What the SDK sends as the key to a compatible server that asks for none (it insists on one).
NO_KEY_NEEDED = "not-needed"
OpenAIApi = Literal["responses", "chat"]


def openai_client(settings: Settings, *, compatible: bool) -> openai.AsyncOpenAI:
    """The SDK client for the summarizers: OPENAI_API_KEY (a placeholder for a compatible
    server without one), `FOLDWISE_SUMMARIZER_BASE_URL` else `OPENAI_BASE_URL`, few retries."""
    secret = settings.openai_api_key.get_secret_value().strip() if settings.openai_api_key else ""
    return openai.AsyncOpenAI(
        api_key=secret or (NO_KEY_NEEDED if compatible else None),
        base_url=settings.summarizer_base_url or settings.openai_base_url,
        max_retries=settings.summary_max_retries,
        timeout=settings.summary_timeout_s,
    )


def openai_api(settings: Settings) -> OpenAIApi:
    """`auto`: Chat Completions on a compatible server (all of them have it), else Responses."""
    if settings.summarizer_openai_api != "auto":
        return settings.summarizer_openai_api
    return "chat" if settings.summarizer_base_url else "responses"


def openai_model(settings: Settings, model: str) -> OpenAIResponsesModel | OpenAIChatModel:
    """The adapter `settings` ask for, on a new client (closed by its `close`)."""
    compatible = bool(settings.summarizer_base_url)
    client = openai_client(settings, compatible=compatible)
    if openai_api(settings) == "chat":
        return OpenAIChatModel(client, model, compatible=compatible)
    return OpenAIResponsesModel(client, model, compatible=compatible)


class _OpenAIModel:
    provider = "openai"
    formats: tuple[str, ...] = ()

    def __init__(self, client: openai.AsyncOpenAI, model: str, *, compatible: bool = False) -> None:
        """`client` is closed by `close`; `compatible`: a server other than OpenAI's."""
        self.client = client
        self.model = model
        self.compatible = compatible
        if compatible:
            self.formats = ()

    def on_prefix(self, prefix: CachedPrefix, instruction: str) -> Prompt:
        return repeat_prefix(prefix, user_turn(instruction))

    def describe_error(self, exc: BaseException) -> str | None:
        if isinstance(exc, openai.APITimeoutError):
            return "openai request timed out"
        if isinstance(exc, openai.APIConnectionError):
            return "openai connection error"
        if isinstance(exc, openai.APIStatusError):
            return f"openai {exc.status_code} {_error_kind(exc)}"
        return None

    async def close(self) -> None:
        await self.client.close()


class OpenAIResponsesModel(_OpenAIModel):
    """`instructions` + input items; the prefix's `system` is its `instructions` string."""

    formats: tuple[str, ...] = ("openai_responses",)

    def fresh(self, system: str, prompt: str) -> Prompt:
        return Prompt(self.model, system, [user_turn(prompt)])

    async def complete(self, prompt: Prompt, max_tokens: int) -> Reply:
        extra: dict[str, Any] = {}
        if isinstance(prompt.system, str):
            extra["instructions"] = prompt.system
        if prompt.tools:
            extra["tools"] = list(prompt.tools)
        response = await self.client.responses.create(
            model=prompt.model,
            input=list(prompt.messages),  # type: ignore[arg-type]
            max_output_tokens=max_tokens,  # reasoning tokens count against it too
            **extra,
        )
        return _responses_reply(response)


class OpenAIChatModel(_OpenAIModel):
    """Chat messages; the system prompt is their first message (a served prefix has it)."""

    formats: tuple[str, ...] = ("openai",)

    def fresh(self, system: str, prompt: str) -> Prompt:
        return Prompt(self.model, None, [{"role": "system", "content": system}, user_turn(prompt)])

    async def complete(self, prompt: Prompt, max_tokens: int) -> Reply:
        # OpenAI takes `max_completion_tokens` (its reasoning models refuse `max_tokens`).
        # Compatible servers all read `max_tokens`; several (Ollama, LM Studio, llama.cpp
        # before 2026) ignore `max_completion_tokens`, so the summary would have no bound.
        limit = "max_tokens" if self.compatible else "max_completion_tokens"
        extra: dict[str, Any] = {limit: max_tokens}
        if prompt.tools:
            extra["tools"] = list(prompt.tools)
        response = await self.client.chat.completions.create(
            model=prompt.model,
            messages=list(prompt.messages),  # type: ignore[arg-type]
            **extra,
        )
        return _chat_reply(response)


def _responses_reply(response: Response) -> Reply:
    texts: list[str] = []
    refusal = False
    for item in response.output:
        if item.type != "message":
            continue  # reasoning, or a call of a tool the served prefix offered
        for part in item.content:
            if part.type == "output_text":
                texts.append(part.text)
            else:
                refusal = True
    text = "\n".join(texts)
    usage = response.usage
    spent = (
        _billed(usage.input_tokens, usage.input_tokens_details.cached_tokens, usage.output_tokens)
        if usage is not None
        else ModelUsage()
    )
    return Reply(text, spent, refused=refusal and not text.strip())


def _chat_reply(response: ChatCompletion) -> Reply:
    message = response.choices[0].message if response.choices else None
    text = (message.content if message else None) or ""
    usage = response.usage  # some compatible servers leave it out
    details = usage.prompt_tokens_details if usage is not None else None
    spent = (
        _billed(
            usage.prompt_tokens, details.cached_tokens if details else 0, usage.completion_tokens
        )
        if usage is not None
        else ModelUsage()
    )
    return Reply(text, spent, refused=bool(message and message.refusal) and not text.strip())


def _billed(prompt_tokens: int, cached: int | None, output_tokens: int) -> ModelUsage:
    """Only the cache reads are counted apart: OpenAI charges no premium for a cache write, so
    the SDK's newer `cache_write_tokens` stay in `input_tokens`, at the input price."""
    cached = cached or 0
    return ModelUsage(
        input_tokens=prompt_tokens - cached, cache_read_tokens=cached, output_tokens=output_tokens
    )


def _error_kind(exc: openai.APIStatusError) -> str:
    """The error body's `code` (`rate_limit_exceeded`), else its `type` (`server_error`); a
    numeric code (vLLM's, LiteLLM's) repeats the status and says nothing more."""
    if exc.code and not exc.code.isdigit():
        return exc.code
    return exc.type or "error"
