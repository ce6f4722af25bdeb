"""The fold coordinator: exactly one summarizer call and one committed fold per summary version,
across any number of server processes (SQLite or PostgreSQL).

1. The caller read the session at summary version v and planned a fold (no transaction left open).
2. Claim the lease: a conditional UPDATE (version still v, no live lease), committed at once.
   Losing means someone else is folding: wait (short polls, each its own tiny transaction)
   until the version moves or their lease lapses, then the caller re-reads and re-assembles.
3. Call the summarizer with NO connection or transaction held: an LLM call takes seconds, and
   SQLite's BEGIN IMMEDIATE would block every writer for that long.
4. Compare-and-swap the new summary in (version still v, lease still ours) together with its
   history row, in one transaction. Zero rows → someone else won (a clear, an expired lease
   taken over): nothing is written, the caller re-reads.

A crash anywhere leaves either the old state (with a lease that lapses after
`fold_lease_s`) or the new one: the only write of the fold is the single CAS transaction.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import socket
import time
import uuid
from collections.abc import Callable, Sequence
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any, Literal, Protocol

from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from app.core.db import session_scope
from app.core.logging import get_logger, log_event
from app.core.metrics import FOLDS_TOTAL, SUMMARIZER_CALLS, SUMMARIZER_FALLBACKS
from app.core.settings import Settings
from app.core.tracing import Record, span
from app.engine.types import Message
from app.models.base import utcnow
from app.repositories.folds import FoldRepository, LeaseClaim, NewSummary
from app.repositories.summary_cache import DbSummaryCache
from app.summarizers.base import (
    CachedPrefix,
    Summarizer,
    SummaryCache,
    SummaryRequest,
    SummaryResult,
)
from app.summarizers.factory import open_summarizer, resolve_strategy
from app.tokens.base import TokenCounter

log = get_logger("foldwise.fold")

# A waiting request re-reads the lease this often: 0.1 s adds at most that much latency
# after the winner commits, and costs one indexed primary-key read per poll.
POLL_INTERVAL_S = 0.1
# The holder renews its lease this many times per lease period, so one slow renewal (SQLite
# busy, a GC pause) does not let a live fold's lease lapse.
RENEWALS_PER_LEASE = 3

# folded: ours committed. lost: our CAS found the version moved. waited: another worker's
# fold finished (or its lease lapsed) while we waited. busy: it was still running when our
# wait ran out.
Outcome = Literal["folded", "lost", "waited", "busy"]


class SummarizerFactory(Protocol):
    """Opens the summarizer for a strategy (and closes what it holds, e.g. an HTTP client)."""

    def __call__(
        self,
        strategy: str | None,
        *,
        settings: Settings,
        counter: TokenCounter,
        cache: SummaryCache | None,
        summarizer: str | None = None,
    ) -> AbstractAsyncContextManager[Summarizer]: ...


@dataclass(frozen=True, slots=True)
class FoldJob:
    """One planned fold, on the state read at `version`."""

    session_pk: int
    session_id: str
    """The client's id, for the log lines."""
    version: int
    previous_summary: str | None
    previous_tokens: int
    previous_message_count: int
    messages: Sequence[Message]
    """Exactly what the summarizer reads: never covered messages, never the pinned one."""
    through_id: str | None
    through_seq: int
    trigger: str  # threshold | force | manual
    strategy: str | None
    max_summary_tokens: int
    tokens_before: int
    messages_before: int
    focus: str | None = None
    task_pinned: bool = False  # the first user message is sent beside the summary
    summarizer: str | None = None  # the session's `provider[:model]`, None: the server's
    prefix: CachedPrefix | None = None
    """The context last served, when the span was in it (app/services/fold_prefix.py)."""
    prefix_note: str | None = None  # why there is none

    def summary(self, result: SummaryResult, stats: dict[str, Any] | None = None) -> NewSummary:
        """What this fold writes, given what the summarizer wrote."""
        return NewSummary(
            text=result.text,
            through_id=self.through_id,
            through_seq=self.through_seq,
            message_count=self.previous_message_count + len(self.messages),
            tokens=result.tokens,
            method=result.method,
            model=result.model,
            tokens_in=result.tokens_in,
            tokens_out=result.tokens_out,
            usage=result.usage_record(),
            stats=stats,
        )


@dataclass(frozen=True, slots=True)
class FoldOutcome:
    status: Outcome
    result: SummaryResult | None = None
    stats: dict[str, Any] = field(default_factory=dict)


def new_owner() -> str:
    """A lease owner id unique per fold attempt (host, pid, random), ≤ 64 chars."""
    return f"{socket.gethostname()[:24]}:{os.getpid()}:{uuid.uuid4().hex[:16]}"


class FoldCoordinator:
    def __init__(
        self,
        sessionmaker: async_sessionmaker[AsyncSession],
        settings: Settings,
        counter: TokenCounter,
        summarizer_factory: SummarizerFactory = open_summarizer,
        clock: Callable[[], datetime] = utcnow,
    ) -> None:
        self.sessionmaker = sessionmaker
        self.settings = settings
        self.counter = counter
        self.summarizer_factory = summarizer_factory
        self.clock = clock

    async def run(self, job: FoldJob) -> FoldOutcome:
        with span(
            "foldwise.fold", session=job.session_id, version=job.version, trigger=job.trigger,
            tokens_before=job.tokens_before, messages=len(job.messages),
        ) as record:  # fmt: skip
            outcome = await self._run(job)
            record(outcome=outcome.status, **outcome.stats)
            return outcome

    async def _run(self, job: FoldJob) -> FoldOutcome:
        owner = new_owner()
        started = time.perf_counter()
        claim = await self._claim(job, owner)
        if claim is None:
            return FoldOutcome("waited" if await self._wait_for_winner(job) else "busy")
        if claim == "taken_over":
            log_event(
                log,
                "lease_takeover",
                level=logging.WARNING,
                session=job.session_id,
                version=job.version,
                reason="the previous fold lease lapsed",
            )
        renewing = asyncio.create_task(self._keep_lease(job, owner))
        try:
            result = await self._summarize(job)
        except BaseException:
            # Give the lease back at once rather than making others wait for it to lapse.
            await self._stop(renewing)
            await self._release(job, owner)
            raise
        await self._stop(renewing)
        stats = self._stats(job, result)
        new = job.summary(result, stats)
        async with session_scope(self.sessionmaker) as db:
            swapped = await FoldRepository(db).swap_summary(
                job.session_pk, version=job.version, owner=owner, new=new
            )
        if not swapped:
            log_event(
                log,
                "fold_lost",
                session=job.session_id,
                version=job.version,
                reason="the summary version moved during the fold",
            )
            return FoldOutcome("lost", result)
        FOLDS_TOTAL.labels(job.trigger, result.method).inc()
        _log_fold(job, result, stats, time.perf_counter() - started)
        return FoldOutcome("folded", result, stats)

    async def summarize(self, job: FoldJob) -> SummaryResult:
        """The summary a fold of `job` would store, computed without a lease and never stored
        (a dry run of GET …/context)."""
        return await self._summarize(job, cached=False)

    async def _claim(self, job: FoldJob, owner: str) -> LeaseClaim | None:
        now = self.clock()
        until = now + timedelta(seconds=self.settings.fold_lease_s)
        async with session_scope(self.sessionmaker) as db:
            return await FoldRepository(db).claim_lease(
                job.session_pk, version=job.version, owner=owner, now=now, until=until
            )

    async def _keep_lease(self, job: FoldJob, owner: str) -> None:
        """Renew the lease while the summarizer runs: a live fold keeps it however long the
        LLM takes, a crashed one loses it within `fold_lease_s`."""
        period = self.settings.fold_lease_s / RENEWALS_PER_LEASE
        while True:
            await asyncio.sleep(period)
            until = self.clock() + timedelta(seconds=self.settings.fold_lease_s)
            try:
                async with session_scope(self.sessionmaker) as db:
                    if not await FoldRepository(db).renew_lease(
                        job.session_pk, owner=owner, until=until
                    ):
                        return  # taken over: our CAS will find out
            except Exception as exc:  # a busy database: try again next period
                log.warning("could not renew the fold lease of %s: %s", job.session_pk, exc)

    @staticmethod
    async def _stop(task: asyncio.Task[None]) -> None:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task

    async def _release(self, job: FoldJob, owner: str) -> None:
        async with session_scope(self.sessionmaker) as db:
            await FoldRepository(db).release_lease(job.session_pk, owner=owner)

    async def _wait_for_winner(self, job: FoldJob) -> bool:
        """Poll until the version moves or the lease is gone or lapsed: True; False when
        `fold_wait_s` ran out first (the holder is still folding, or crashed moments ago)."""
        deadline = time.monotonic() + self.settings.fold_wait_s
        while True:
            async with session_scope(self.sessionmaker) as db:
                state = await FoldRepository(db).lease_state(job.session_pk)
            if state is None or state.summary_version != job.version:
                return True
            if state.lease_until is None or state.lease_until < self.clock():
                return True
            if time.monotonic() >= deadline:
                return False
            await asyncio.sleep(POLL_INTERVAL_S)

    async def _summarize(self, job: FoldJob, cached: bool = True) -> SummaryResult:
        """`cached`: read and write the summary cache (never for rule, which is cheaper)."""
        strategy = job.strategy
        cache = DbSummaryCache(self.sessionmaker) if cached and strategy != "rule" else None
        request = SummaryRequest(
            messages=tuple(job.messages),
            previous_summary=job.previous_summary or None,
            max_summary_tokens=job.max_summary_tokens,
            focus=job.focus,
            task_pinned=job.task_pinned,
            prefix=job.prefix,
            prefix_note=job.prefix_note,
        )
        concrete = resolve_strategy(strategy, self.settings, job.summarizer)
        SUMMARIZER_CALLS.labels(concrete).inc()
        factory = self.summarizer_factory(
            strategy,
            settings=self.settings,
            counter=self.counter,
            cache=cache,
            summarizer=job.summarizer,
        )
        # The rule summarizer is pure CPU (no client, no cache): it runs in a worker thread
        # with a loop of its own, so a large fold never stalls this process's event loop.
        # Injected summarizers (tests) may hold loop-bound state and run here.
        offload = self.summarizer_factory is open_summarizer and concrete == "rule"
        async with factory as summarizer:
            with span("foldwise.summarize", session=job.session_id, strategy=strategy or "auto",
                      messages=len(job.messages)) as record:  # fmt: skip
                if offload:
                    result = await asyncio.to_thread(asyncio.run, summarizer.summarize(request))
                else:
                    result = await summarizer.summarize(request)
                record_summary(record, result)
        note_fallback(result, job.session_id)
        return result

    @staticmethod
    def _stats(job: FoldJob, result: SummaryResult) -> dict[str, Any]:
        """Context size before the fold and (estimated) after it, as stored with the row."""
        folded_tokens = sum(m.tokens for m in job.messages)
        return {
            "trigger": job.trigger,
            "tokens_before": job.tokens_before,
            "tokens_after": job.tokens_before - folded_tokens - job.previous_tokens + result.tokens,
            "messages_before": job.messages_before,
            "messages_after": job.messages_before - len(job.messages),
            "messages_folded": len(job.messages),
        }


def record_summary(record: Record, result: SummaryResult) -> None:
    """A summarizer call's numbers on its span."""
    record(
        method=result.method, summary_tokens=result.tokens, tokens_in=result.tokens_in,
        tokens_out=result.tokens_out, cached=result.cached, fallback=result.fallback or "",
    )  # fmt: skip


def note_fallback(result: SummaryResult, session_id: str) -> None:
    """Count and log an LLM summary that fell back to `rule` (`session_id` "-": stateless)."""
    if result.method != "fallback" or not result.fallback:
        return
    SUMMARIZER_FALLBACKS.labels(result.fallback[:64]).inc()
    log_event(log, "fallback", level=logging.WARNING, session=session_id, reason=result.fallback)


def _log_fold(job: FoldJob, result: SummaryResult, stats: dict[str, Any], seconds: float) -> None:
    log_event(
        log,
        "fold",
        session=job.session_id,
        version=job.version + 1,
        reason=job.trigger,
        method=result.method,
        messages_folded=len(job.messages),
        tokens_before=stats["tokens_before"],
        tokens_after=stats["tokens_after"],
        duration_ms=round(seconds * 1000, 1),
    )
