"""Retention: sessions idle past their retention are deleted by a bounded background sweep,
and `foldwise purge` deletes on an operator's criteria (README "Data lifecycle").

A sweep deletes in transactions of `retention_batch` sessions (app/repositories/retention.py:
safe with any number of replicas sweeping at once), at most MAX_BATCHES per sweep, so one
sweep's work and lock time are bounded whatever the backlog; the next sweep goes on. Each
sweep counts `foldwise_retention_*` and logs one line.
"""

from __future__ import annotations

import asyncio
import random
import time
from dataclasses import dataclass
from datetime import datetime, timedelta

from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from app.core.db import read_scope, session_scope
from app.core.logging import get_logger
from app.core.metrics import RETENTION_DELETED, RETENTION_SWEEPS
from app.core.settings import Settings
from app.models.base import utcnow
from app.repositories.retention import Deleted, Expiry, RetentionRepository

log = get_logger("foldwise.retention")

# Batches per sweep: 50 × 100 sessions is 5,000 sessions an hour per replica at the defaults,
# far above any steady expiry rate; a backlog (retention turned on) drains over a few sweeps.
MAX_BATCHES = 50
# Replicas started together would sweep in step: each waits ±JITTER of the interval.
JITTER = 0.2


@dataclass(frozen=True, slots=True)
class SweepResult:
    """What one sweep removed (shared rows: summary-cache entries and calibrations of no one
    session, aged out too), and how long it took."""

    sessions: int
    messages: int
    shared_rows: int
    seconds: float


async def delete_expired(
    sessionmaker: async_sessionmaker[AsyncSession], expiry: Expiry, batch: int, batches: int
) -> Deleted:
    """Delete what `expiry` selects, `batch` sessions per transaction, at most `batches`
    transactions; what this caller deleted (another sweeper's share is not counted)."""
    sessions = messages = 0
    for _ in range(batches):
        async with session_scope(sessionmaker) as db:
            done = await RetentionRepository(db).delete_batch(expiry, batch)
        sessions, messages = sessions + done.sessions, messages + done.messages
        if done.sessions < batch:
            break
    return Deleted(sessions=sessions, messages=messages)


async def count_expired(sessionmaker: async_sessionmaker[AsyncSession], expiry: Expiry) -> Deleted:
    async with read_scope(sessionmaker) as db:
        return await RetentionRepository(db).count(expiry)


async def sweep(
    sessionmaker: async_sessionmaker[AsyncSession], settings: Settings, now: datetime | None = None
) -> SweepResult:
    """One bounded sweep: expired sessions, then stale shared rows (with a global retention)."""
    started = time.perf_counter()
    now = now or utcnow()
    expiry = Expiry(now=now, default_days=settings.retention_days)
    deleted = await delete_expired(sessionmaker, expiry, settings.retention_batch, MAX_BATCHES)
    shared = 0
    if settings.retention_days > 0:
        cutoff = now - timedelta(days=settings.retention_days)
        async with session_scope(sessionmaker) as db:
            shared = await RetentionRepository(db).delete_stale_shared_rows(
                cutoff, settings.retention_batch
            )
    result = SweepResult(deleted.sessions, deleted.messages, shared, time.perf_counter() - started)
    RETENTION_SWEEPS.labels("ok").inc()
    RETENTION_DELETED.labels("sessions").inc(result.sessions)
    RETENTION_DELETED.labels("messages").inc(result.messages)
    log.info(
        "retention sweep: %d sessions (%d messages), %d cache/calibration rows deleted in %.0f ms",
        result.sessions,
        result.messages,
        result.shared_rows,
        result.seconds * 1000,
    )
    return result


class RetentionSweeper:
    """The background sweep of one replica, every `retention_sweep_s` (± JITTER)."""

    def __init__(self, sessionmaker: async_sessionmaker[AsyncSession], settings: Settings) -> None:
        self.sessionmaker = sessionmaker
        self.settings = settings
        self._task: asyncio.Task[None] | None = None

    def start(self) -> None:
        if self.settings.retention_sweep_s > 0:
            self._task = asyncio.create_task(self._run())

    async def close(self) -> None:
        if self._task is not None:
            self._task.cancel()
            await asyncio.gather(self._task, return_exceptions=True)

    async def _run(self) -> None:
        interval = self.settings.retention_sweep_s
        while True:
            await asyncio.sleep(interval * random.uniform(1 - JITTER, 1 + JITTER))
            try:
                await sweep(self.sessionmaker, self.settings)
            except Exception as exc:  # the next sweep tries again
                RETENTION_SWEEPS.labels("failed").inc()
                log.warning("retention sweep failed: %s", type(exc).__name__)
