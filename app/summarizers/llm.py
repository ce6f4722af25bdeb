"""`llm`: fold with an Anthropic model; on any failure the rule summarizer answers instead.

The whole fold — every chunk, every SDK retry, every `retry-after` wait — runs under one
deadline (`summary_timeout_s`, asyncio.timeout): the SDK honours `retry-after` with no upper
bound, so its own timeout alone could stall a request for an hour. Retries are kept low
(`summary_max_retries`). If any chunk fails, the whole request falls back to `rule` over all of
its messages, so a result always covers exactly the messages it was given.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import anthropic

from app.core.settings import Settings
from app.engine.types import Message
from app.summarizers.base import SummaryRequest, SummaryResult
from app.summarizers.chunking import chunk_budget, plan_chunks
from app.summarizers.prompts import SYSTEM_PROMPT, build_prompt, render_transcript
from app.summarizers.redact import redact, redact_messages
from app.summarizers.rule import rule_summary, said_lines
from app.tokens.base import TokenCounter

# Openings of replies that decline instead of summarizing.
REFUSAL_OPENINGS = ("i can't", "i cannot", "i'm sorry", "i am sorry", "i won't", "as an ai")


class InvalidReply(Exception):
    """The model answered, but not with a usable summary."""


@dataclass(slots=True)
class Usage:
    tokens_in: int = 0
    tokens_out: int = 0


def describe_error(exc: BaseException) -> str:
    """A short, human-readable fallback reason, e.g. "anthropic 429 rate_limit_error"."""
    if isinstance(exc, anthropic.APITimeoutError):
        return "anthropic request timed out"
    if isinstance(exc, anthropic.APIConnectionError):
        return "anthropic connection error"
    if isinstance(exc, anthropic.APIStatusError):
        body = exc.body if isinstance(exc.body, dict) else {}
        error = body.get("error") if isinstance(body.get("error"), dict) else body
        kind = error.get("type") if isinstance(error, dict) else None
        return f"anthropic {exc.status_code} {kind or 'error'}"
    if isinstance(exc, InvalidReply):
        return f"invalid reply: {exc}"
    return f"malformed response ({type(exc).__name__})"


class AnthropicSummarizer:
    def __init__(
        self,
        *,
        settings: Settings,
        counter: TokenCounter,
        client: anthropic.AsyncAnthropic,
        model: str | None = None,
    ) -> None:
        """`client` is opened and closed by its owner (app.summarizers.factory.open_summarizer)."""
        self.settings = settings
        self.counter = counter
        self.client = client
        self.model = model or settings.summary_model
        self.deadline = settings.summary_timeout_s

    async def summarize(self, request: SummaryRequest) -> SummaryResult:
        if not request.messages:  # nothing new to read: re-fit the previous summary, no call
            text = await asyncio.to_thread(
                rule_summary, [], request.previous_summary, request.max_summary_tokens, self.counter
            )
            return SummaryResult(text=text, tokens=self.counter.count_text(text), method="rule")
        usage = Usage()
        try:
            async with asyncio.timeout(self.deadline):
                text = await self._fold(request, usage)
        except TimeoutError:
            return await self._fallback(request, f"timeout after {self.deadline}s", usage)
        except Exception as exc:  # every failure class becomes a fallback, never an error
            return await self._fallback(request, describe_error(exc), usage)
        text = await asyncio.to_thread(self._fit, text, request.max_summary_tokens)
        return SummaryResult(
            text=text,
            tokens=self.counter.count_text(text),
            method="llm",
            model=self.model,
            tokens_in=usage.tokens_in,
            tokens_out=usage.tokens_out,
        )

    async def _fold(self, request: SummaryRequest, usage: Usage) -> str:
        budget = chunk_budget(self.settings.summary_input_tokens, request.max_summary_tokens)
        # Reading the transcript is CPU work over the whole request: worker threads do it.
        # Messages are redacted before chunking: a message too large for one call is cut to
        # fit, and a cut through a key would leave a piece no pattern recognises.
        previous = request.previous_summary
        summary = await asyncio.to_thread(_redacted_summary, previous) if previous else None
        messages = await asyncio.to_thread(redact_messages, request.messages)
        chunks = await asyncio.to_thread(plan_chunks, messages, budget, self.counter)
        for chunk in chunks or [[]]:
            transcript = await asyncio.to_thread(_redacted_transcript, chunk)
            summary = await self._call(summary, transcript, request, usage)
        assert summary is not None
        return summary

    async def _call(
        self, previous: str | None, transcript: str, request: SummaryRequest, usage: Usage
    ) -> str:
        focus = redact(request.focus) if request.focus else None
        prompt = build_prompt(previous, transcript, focus, request.max_summary_tokens)
        response = await self.client.messages.create(
            model=self.model,
            max_tokens=request.max_summary_tokens,
            system=SYSTEM_PROMPT,
            messages=[{"role": "user", "content": prompt}],
        )
        usage.tokens_in += response.usage.input_tokens
        usage.tokens_out += response.usage.output_tokens
        input_tokens = self.counter.count_text(previous or "") + self.counter.count_text(transcript)
        return self._validate(response, input_tokens)

    def _validate(self, response: Any, input_tokens: int) -> str:
        if response.stop_reason == "refusal":
            raise InvalidReply("model refused")
        texts = [b.text for b in response.content if getattr(b, "type", None) == "text"]
        if not texts:
            raise InvalidReply("no text in reply")
        text = redact("\n".join(texts).strip())
        if not text:
            raise InvalidReply("empty reply")
        if text.lower().startswith(REFUSAL_OPENINGS):
            raise InvalidReply("not a summary")
        tokens = self.counter.count_text(text)
        if tokens > input_tokens:
            raise InvalidReply(f"reply longer than its input ({tokens} > {input_tokens} tokens)")
        return text

    def _fit(self, text: str, budget: int) -> str:
        """Over budget (tokenizers differ): re-compress deterministically with the rule merger."""
        if self.counter.count_text(text) <= budget:
            return text
        return rule_summary([], text, budget, self.counter)

    async def _fallback(self, request: SummaryRequest, reason: str, usage: Usage) -> SummaryResult:
        return await asyncio.to_thread(
            rule_fallback, request, self.counter, reason, self.model, usage
        )


def _redacted_summary(summary: str) -> str:
    return redact(said_lines(summary))


def _redacted_transcript(chunk: Sequence[Message]) -> str:
    return redact(render_transcript(chunk))


def rule_fallback(
    request: SummaryRequest, counter: TokenCounter, reason: str, model: str | None, usage: Usage
) -> SummaryResult:
    """The `rule` summary of the whole request, reported as a fallback with its reason."""
    text = rule_summary(
        request.messages,
        request.previous_summary,
        request.max_summary_tokens,
        counter,
        task_pinned=request.task_pinned,
    )
    return SummaryResult(
        text=text,
        tokens=counter.count_text(text),
        method="fallback",
        model=model,
        tokens_in=usage.tokens_in,
        tokens_out=usage.tokens_out,
        fallback=reason,
    )
