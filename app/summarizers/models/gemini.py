"""Gemini's generateContent through google-genai (`client.aio`).

Usage: `prompt_token_count` counts the implicitly cached tokens too (`cached_content_token_count`),
so `ModelUsage.input_tokens` is the difference; thinking (`thoughts_token_count`) is billed as
output, beside `candidates_token_count`. Gemini bills no cache writes.

A served prefix is repeated as the same contents, system instruction and tools. The SDK reads
them into its types and writes them again (key order, `inlineData` field names and base64 of
bytes may change): Gemini's implicit cache matches the tokens the request reads as, which those
spellings do not change.
"""

from __future__ import annotations

from typing import Any

import httpx
import httpx2
from google import genai
from google.genai import errors
from google.genai import types as genai_types

from app.core.settings import Settings
from app.summarizers.base import CachedPrefix, ModelUsage
from app.summarizers.models.base import Prompt, Reply, repeat_prefix

# Finish reasons of a reply Gemini withheld: a refusal, as Anthropic's `stop_reason: refusal`
# (a reply without text that stopped for MAX_TOKENS or OTHER is only empty).
BLOCKED = frozenset(
    {"SAFETY", "PROHIBITED_CONTENT", "BLOCKLIST", "SPII", "RECITATION", "IMAGE_SAFETY"}
)
# google-genai sends through httpx2 (or httpx, GOOGLE_GENAI_HTTP_CLIENT=httpx) and lets their
# transport errors through.
_TIMEOUTS = (httpx.TimeoutException, httpx2.TimeoutException)
_TRANSPORT = (httpx.TransportError, httpx2.TransportError)


def gemini_client(settings: Settings) -> genai.Client:
    """The SDK client for the summarizers: GEMINI_API_KEY, GEMINI_BASE_URL, the summary
    timeout (milliseconds here) and few attempts. Its retry options are always set: without
    them the SDK's own retry of connection errors would wait 1–10 s on its own terms."""
    key = settings.gemini_api_key.get_secret_value() if settings.gemini_api_key else None
    options = genai_types.HttpOptions(
        base_url=settings.gemini_base_url,
        timeout=max(1, round(settings.summary_timeout_s * 1000)),
        retry_options=genai_types.HttpRetryOptions(attempts=settings.summary_max_retries + 1),
    )
    return genai.Client(api_key=key, vertexai=False, http_options=options)


def user_content(text: str) -> dict[str, Any]:
    return {"role": "user", "parts": [{"text": text}]}


class GeminiModel:
    provider = "gemini"
    formats: tuple[str, ...] = ("gemini",)

    def __init__(self, client: genai.Client, model: str) -> None:
        """`client` is closed by `close`."""
        self.client = client
        self.model = model

    def fresh(self, system: str, prompt: str) -> Prompt:
        return Prompt(self.model, system, [user_content(prompt)])

    def on_prefix(self, prefix: CachedPrefix, instruction: str) -> Prompt:
        return repeat_prefix(prefix, user_content(instruction))

    async def complete(self, prompt: Prompt, max_tokens: int) -> Reply:
        config = genai_types.GenerateContentConfig(
            system_instruction=prompt.system if isinstance(prompt.system, str) else None,
            tools=list(prompt.tools) if prompt.tools else None,
            max_output_tokens=max_tokens,  # thinking counts against it too
            # One request: the served tools are there to be read, never called by the SDK.
            automatic_function_calling=genai_types.AutomaticFunctionCallingConfig(disable=True),
        )
        response = await self.client.aio.models.generate_content(
            model=prompt.model,
            contents=list(prompt.messages),  # type: ignore[arg-type]
            config=config,
        )
        text = _text(response)
        return Reply(text, _usage(response), refused=not text.strip() and _blocked(response))

    def describe_error(self, exc: BaseException) -> str | None:
        if isinstance(exc, errors.APIError):
            return f"gemini {exc.code} {exc.status or 'error'}"
        if isinstance(exc, _TIMEOUTS):
            return "gemini request timed out"
        if isinstance(exc, _TRANSPORT):
            return "gemini connection error"
        return None

    async def close(self) -> None:
        await self.client.aio.aclose()
        self.client.close()  # the sync side's pool: opened with the client, never used


def _text(response: genai_types.GenerateContentResponse) -> str:
    """The first candidate's text parts, without its thoughts."""
    candidate = response.candidates[0] if response.candidates else None
    parts = candidate.content.parts if candidate and candidate.content else None
    return "\n".join(part.text for part in parts or () if part.text and not part.thought)


def _blocked(response: genai_types.GenerateContentResponse) -> bool:
    feedback = response.prompt_feedback
    if feedback is not None and feedback.block_reason is not None:
        return True
    candidate = response.candidates[0] if response.candidates else None
    reason = candidate.finish_reason if candidate else None
    return reason is not None and str(reason.value) in BLOCKED


def _usage(response: genai_types.GenerateContentResponse) -> ModelUsage:
    meta = response.usage_metadata
    if meta is None:
        return ModelUsage()
    cached = meta.cached_content_token_count or 0
    return ModelUsage(
        input_tokens=(meta.prompt_token_count or 0) - cached,
        cache_read_tokens=cached,
        output_tokens=(meta.candidates_token_count or 0) + (meta.thoughts_token_count or 0),
    )
