"""A summarizer fake that records every request, given to `create_app(summarizer_factory=…)`
(the seam production uses for the real summarizers): a test asks for the `recorder` fixture
(tests/conftest.py) and its `app` is built with it."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field

from app.core.settings import Settings
from app.summarizers.base import Method, Summarizer, SummaryCache, SummaryRequest, SummaryResult
from app.tokens.base import TokenCounter


@dataclass
class Call:
    strategy: str | None
    request: SummaryRequest


@dataclass
class RecordingSummarizer:
    """Writes "summary #n of seqs a..b" (within max_summary_tokens) and records its inputs.

    `methods` scripts the method of each result in turn (default "rule"); `padding` makes
    results longer, ignoring the cap, to provoke an over-share summary.
    """

    methods: list[Method] = field(default_factory=list)
    padding: int = 0
    calls: list[Call] = field(default_factory=list)
    gate: asyncio.Event | None = None
    """When given, each summary is returned only once the gate is set (a slow summarizer)."""
    delay: float = 0.0
    """Seconds each summary takes after the gate (racing folds really overlap)."""
    error: Exception | None = None
    """When given, each summary raises it after the delay (a failing summarizer)."""
    result: SummaryResult | None = None
    """When given, every summary is this result as is (a test that spells out token counts)."""

    @asynccontextmanager
    async def factory(
        self,
        strategy: str | None,
        *,
        settings: Settings,
        counter: TokenCounter,
        cache: SummaryCache | None,
        summarizer: str | None = None,
    ) -> AsyncIterator[Summarizer]:
        yield _Bound(self, strategy, counter)


@dataclass
class _Bound:
    owner: RecordingSummarizer
    strategy: str | None
    counter: TokenCounter

    async def summarize(self, request: SummaryRequest) -> SummaryResult:
        self.owner.calls.append(Call(self.strategy, request))
        number = len(self.owner.calls)
        if self.owner.gate is not None:
            await self.owner.gate.wait()
        if self.owner.delay:
            await asyncio.sleep(self.owner.delay)
        if self.owner.error is not None:
            raise self.owner.error
        if self.owner.result is not None:
            return self.owner.result
        seqs = [m.seq for m in request.messages]
        span = f"seqs {min(seqs)}..{max(seqs)}" if seqs else "no new messages"
        text = f"summary #{number} of {span}" + " filler" * self.owner.padding
        method: Method = self.owner.methods.pop(0) if self.owner.methods else "rule"
        return SummaryResult(
            text=text,
            tokens=self.counter.count_text(text),
            method=method,
            fallback="scripted fallback" if method == "fallback" else None,
        )
