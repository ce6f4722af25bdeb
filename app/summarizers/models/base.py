"""The seam between the LLM summarizer and a provider's SDK: a prompt in the provider's own
shape goes in, the reply's text and billed usage come out.

A prompt is either fresh (`fresh`: the summarizer's system prompt and one user turn) or the
last served context repeated byte for byte with the instruction as one more user turn
(`on_prefix`), which the provider's prompt cache bills at its read price. Adapters raise the
SDK's own exceptions; `describe_error` turns them into the one-line reason a fallback shows.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from app.summarizers.base import CachedPrefix, ModelUsage


@dataclass(frozen=True, slots=True)
class Prompt:
    model: str
    system: str | list[dict[str, Any]] | None
    messages: Sequence[dict[str, Any]]
    tools: Sequence[dict[str, Any]] | None = None


@dataclass(frozen=True, slots=True)
class Reply:
    text: str  # the reply's text parts, joined; "" when it had none
    usage: ModelUsage
    refused: bool = False  # the provider said the model declined


class InvalidReply(Exception):
    """The model answered, but not with a usable summary."""


class SummaryModel(Protocol):
    provider: str
    """What the fallback reasons and logs call it: `anthropic`, `openai`, `gemini`."""
    model: str
    formats: tuple[str, ...]
    """The context formats whose served prefix this API can repeat."""

    def fresh(self, system: str, prompt: str) -> Prompt: ...

    def on_prefix(self, prefix: CachedPrefix, instruction: str) -> Prompt: ...

    async def complete(self, prompt: Prompt, max_tokens: int) -> Reply: ...

    def describe_error(self, exc: BaseException) -> str | None:
        """The reason for an SDK error (`openai 429 rate_limit_exceeded`); None: not its own."""
        ...

    async def close(self) -> None: ...


def user_turn(text: str) -> dict[str, Any]:
    """The instruction as the last user turn of a chat-shaped API (Anthropic, OpenAI)."""
    return {"role": "user", "content": text}


def repeat_prefix(prefix: CachedPrefix, last_turn: dict[str, Any]) -> Prompt:
    """The served context unchanged (its model, system, messages and tools: the provider's cache
    matches it only whole), then one more turn. The model is the prefix's: a prompt cache is per
    model, so another model would pay the full price for the same tokens."""
    return Prompt(prefix.model, prefix.system, [*prefix.messages, last_turn], prefix.tools)
