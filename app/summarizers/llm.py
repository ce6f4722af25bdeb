"""`llm`: fold with any model behind `SummaryModel` (app/summarizers/models/); on any failure
the rule summarizer answers instead.

The whole fold — every chunk, every SDK retry, every `retry-after` wait — runs under one
deadline (`summary_timeout_s`, asyncio.timeout): the SDKs honour `retry-after` with no upper
bound, so their own timeout alone could stall a request for an hour. Retries are kept low
(`summary_max_retries`). If any chunk fails, the whole request falls back to `rule` over all of
its messages, so a result always covers exactly the messages it was given.

Two prompts (SPEC §13): with a cached prefix in a format the model's API speaks, one request
repeats the last served context and asks for the fold as its last user turn (no chunking: that
context fitted the model's window); otherwise a fresh prompt carries the previous summary and
the redacted transcript, chunked when long. The reply is checked and fitted the same way.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass, field

from app.core.settings import Settings
from app.engine.types import Message
from app.summarizers.base import (
    CachedPrefix,
    ModelUsage,
    PromptKind,
    SummaryRequest,
    SummaryResult,
)
from app.summarizers.chunking import chunk_budget, plan_chunks
from app.summarizers.models.base import InvalidReply, Reply, SummaryModel
from app.summarizers.prompts import Instructions, render_transcript
from app.summarizers.redact import redact, redact_messages
from app.summarizers.rule import rule_summary, said_lines
from app.tokens.base import TokenCounter

# Openings of replies that decline instead of summarizing.
REFUSAL_OPENINGS = ("i can't", "i cannot", "i'm sorry", "i am sorry", "i won't", "as an ai")


@dataclass(slots=True)
class Spent:
    """Usage of the calls a fold made so far (a failed fold still reports what it cost)."""

    usage: ModelUsage = field(default_factory=ModelUsage)


@dataclass(frozen=True, slots=True)
class _Folded:
    text: str
    prompt: PromptKind
    note: str | None
    model: str  # a fold on the prefix asks the conversation's model, whose cache it reads


class LLMSummarizer:
    def __init__(
        self,
        *,
        settings: Settings,
        counter: TokenCounter,
        model: SummaryModel,
        instructions: Instructions | None = None,
    ) -> None:
        """`model` is opened and closed by its owner (app.summarizers.factory.open_summarizer)."""
        self.settings = settings
        self.counter = counter
        self.llm = model
        self.model = model.model
        self.instructions = instructions or Instructions()
        self.deadline = settings.summary_timeout_s

    async def summarize(self, request: SummaryRequest) -> SummaryResult:
        if not request.messages:  # nothing new to read: re-fit the previous summary, no call
            text = await asyncio.to_thread(
                rule_summary, [], request.previous_summary, request.max_summary_tokens, self.counter
            )
            return SummaryResult(text=text, tokens=self.counter.count_text(text), method="rule")
        spent = Spent()
        try:
            async with asyncio.timeout(self.deadline):
                folded = await self._fold(request, spent)
        except TimeoutError:
            return await self._fallback(request, f"timeout after {self.deadline}s", spent)
        except Exception as exc:  # every failure class becomes a fallback, never an error
            return await self._fallback(request, self.describe_error(exc), spent)
        text = await asyncio.to_thread(self._fit, folded.text, request.max_summary_tokens)
        return SummaryResult(
            text=text,
            tokens=self.counter.count_text(text),
            method="llm",
            model=folded.model,
            usage=spent.usage,
            prompt=folded.prompt,
            prompt_note=folded.note,
        )

    def describe_error(self, exc: BaseException) -> str:
        """A short, human-readable fallback reason, e.g. "anthropic 429 rate_limit_error"."""
        if isinstance(exc, InvalidReply):
            return f"invalid reply: {exc}"
        return self.llm.describe_error(exc) or f"malformed response ({type(exc).__name__})"

    async def _fold(self, request: SummaryRequest, spent: Spent) -> _Folded:
        prefix = request.prefix
        if prefix is not None and prefix.format in self.llm.formats:
            text = await self._on_prefix(prefix, request, spent)
            return _Folded(text, "cached_prefix", None, prefix.model)
        note = request.prefix_note
        if prefix is not None:
            provider = self.llm.provider
            note = f"the {provider} summarizer does not fold on a context served as {prefix.format}"
        return _Folded(await self._fresh(request, spent), "fresh", note, self.model)

    async def _on_prefix(self, prefix: CachedPrefix, request: SummaryRequest, spent: Spent) -> str:
        """One request: the served context as sent, then the instruction. The prefix is sent
        as the client sent it to the same provider (redacting it would change its bytes and
        miss the cache); the reply is redacted like any other."""
        focus = redact(request.focus) if request.focus else None
        instruction = self.instructions.on_prefix(
            prefix.keep_last, prefix.span_end, focus, request.max_summary_tokens
        )
        prompt = self.llm.on_prefix(prefix, instruction)
        reply = await self.llm.complete(prompt, request.max_summary_tokens)
        spent.usage += reply.usage
        read = sum(m.tokens for m in request.messages)
        read += self.counter.count_text(request.previous_summary or "")
        return self._validate(reply, read)

    async def _fresh(self, request: SummaryRequest, spent: Spent) -> str:
        budget = chunk_budget(
            self.settings.summary_input_tokens,
            request.max_summary_tokens,
            self.instructions.instruction_tokens(self.counter),
        )
        # Reading the transcript is CPU work over the whole request: worker threads do it.
        # Messages are redacted before chunking: a message too large for one call is cut to
        # fit, and a cut through a key would leave a piece no pattern recognises.
        previous = request.previous_summary
        summary = await asyncio.to_thread(_redacted_summary, previous) if previous else None
        messages = await asyncio.to_thread(redact_messages, request.messages)
        chunks = await asyncio.to_thread(plan_chunks, messages, budget, self.counter)
        for chunk in chunks or [[]]:
            transcript = await asyncio.to_thread(_redacted_transcript, chunk)
            summary = await self._call(summary, transcript, request, spent)
        assert summary is not None
        return summary

    async def _call(
        self, previous: str | None, transcript: str, request: SummaryRequest, spent: Spent
    ) -> str:
        focus = redact(request.focus) if request.focus else None
        text = self.instructions.fresh(previous, transcript, focus, request.max_summary_tokens)
        prompt = self.llm.fresh(self.instructions.system, text)
        reply = await self.llm.complete(prompt, request.max_summary_tokens)
        spent.usage += reply.usage
        read = self.counter.count_text(previous or "") + self.counter.count_text(transcript)
        return self._validate(reply, read)

    def _validate(self, reply: Reply, input_tokens: int) -> str:
        if reply.refused:
            raise InvalidReply("model refused")
        text = redact(reply.text.strip())
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

    async def _fallback(self, request: SummaryRequest, reason: str, spent: Spent) -> SummaryResult:
        return await asyncio.to_thread(
            rule_fallback, request, self.counter, reason, self.model, spent.usage
        )


def _redacted_summary(summary: str) -> str:
    return redact(said_lines(summary))


def _redacted_transcript(chunk: Sequence[Message]) -> str:
    return redact(render_transcript(chunk))


def rule_fallback(
    request: SummaryRequest,
    counter: TokenCounter,
    reason: str,
    model: str | None,
    usage: ModelUsage,
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
        usage=usage,
        fallback=reason,
    )
