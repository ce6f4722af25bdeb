"""Anthropic Messages API (`anthropic` SDK). Usage: `input_tokens` excludes the cache reads
and writes, which the API reports apart."""

from __future__ import annotations

from typing import Any

import anthropic

from app.core.settings import Settings
from app.summarizers.base import CachedPrefix, ModelUsage
from app.summarizers.models.base import Prompt, Reply, repeat_prefix, user_turn


def anthropic_client(settings: Settings) -> anthropic.AsyncAnthropic:
    """The SDK client for the summarizers: the configured key and endpoint, few retries."""
    key = settings.anthropic_api_key.get_secret_value() if settings.anthropic_api_key else None
    return anthropic.AsyncAnthropic(
        api_key=key,
        base_url=settings.anthropic_base_url,
        max_retries=settings.summary_max_retries,
        timeout=settings.summary_timeout_s,
    )


class AnthropicModel:
    provider = "anthropic"
    formats: tuple[str, ...] = ("anthropic",)

    def __init__(self, client: anthropic.AsyncAnthropic, model: str) -> None:
        """`client` is closed by `close`."""
        self.client = client
        self.model = model

    def fresh(self, system: str, prompt: str) -> Prompt:
        return Prompt(self.model, system, [user_turn(prompt)])

    def on_prefix(self, prefix: CachedPrefix, instruction: str) -> Prompt:
        return repeat_prefix(prefix, user_turn(instruction))

    async def complete(self, prompt: Prompt, max_tokens: int) -> Reply:
        extra: dict[str, Any] = {"system": prompt.system} if prompt.system else {}
        if prompt.tools:
            extra["tools"] = list(prompt.tools)
        response = await self.client.messages.create(
            model=prompt.model,
            max_tokens=max_tokens,
            messages=list(prompt.messages),  # type: ignore[arg-type]
            **extra,
        )
        usage = response.usage
        texts = [block.text for block in response.content if block.type == "text"]
        return Reply(
            text="\n".join(texts),
            usage=ModelUsage(
                input_tokens=usage.input_tokens,
                cache_read_tokens=usage.cache_read_input_tokens or 0,
                cache_write_tokens=usage.cache_creation_input_tokens or 0,
                output_tokens=usage.output_tokens,
            ),
            refused=response.stop_reason == "refusal",
        )

    def describe_error(self, exc: BaseException) -> str | None:
        if isinstance(exc, anthropic.APITimeoutError):
            return "anthropic request timed out"
        if isinstance(exc, anthropic.APIConnectionError):
            return "anthropic connection error"
        if isinstance(exc, anthropic.APIStatusError):
            body = exc.body if isinstance(exc.body, dict) else {}
            error = body.get("error") if isinstance(body.get("error"), dict) else body
            kind = error.get("type") if isinstance(error, dict) else None
            return f"anthropic {exc.status_code} {kind or 'error'}"
        return None

    async def close(self) -> None:
        await self.client.close()
