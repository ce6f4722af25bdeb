"""Which sessions have expired, and their deletion in bounded batches.

One statement per batch, `DELETE … WHERE pk IN (SELECT pk … LIMIT n FOR UPDATE SKIP LOCKED)
RETURNING`, so any number of sweepers run at once: on PostgreSQL each locks the rows it
takes and skips the ones another holds (no sweeper waits for another, none deletes a row
twice), and a row an append updated meanwhile is checked again against the condition under
its lock; on SQLite the statement runs under the database write lock (one writer), so
sweepers take turns. Messages and summaries go with their session (ON DELETE CASCADE).

Idle time is computed in SQL per dialect (PostgreSQL intervals, SQLite julian days), so a
session's own `settings.retention_days` is honoured without reading rows into Python.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from sqlalchemy import ColumnElement, and_, delete, func, literal, select
from sqlalchemy.ext.asyncio import AsyncSession

from app.models import Calibration, Session, SummaryCacheEntry
from app.models.base import Timestamp


@dataclass(frozen=True, slots=True)
class Expiry:
    """What a sweep or a purge deletes.

    `default_days`: sessions idle longer than their `settings.retention_days`, else this
    (0 or less: only sessions with their own); `older_than`: sessions idle longer than this,
    whatever their settings (an operator's purge). `tenant` / `id_prefix` narrow either.
    """

    now: datetime
    default_days: int | None = None
    older_than: timedelta | None = None
    tenant: str | None = None
    id_prefix: str | None = None


@dataclass(frozen=True, slots=True)
class Deleted:
    sessions: int
    messages: int


class RetentionRepository:
    def __init__(self, db: AsyncSession) -> None:
        self.db = db
        self.dialect = db.get_bind().dialect.name

    def _before(self, now: datetime, days: Any) -> ColumnElement[bool]:
        """updated_at more than `days` (an SQL integer expression) before `now`."""
        if self.dialect == "postgresql":
            cutoff = literal(now, Timestamp) - func.make_interval(0, 0, 0, days)
            return Session.updated_at < cutoff
        stamp = now.astimezone(UTC).strftime("%Y-%m-%d %H:%M:%S.%f")  # as stored
        idle: ColumnElement[bool] = func.julianday(Session.updated_at) < (
            func.julianday(stamp) - days
        )
        return idle

    def condition(self, expiry: Expiry) -> ColumnElement[bool]:
        terms: list[ColumnElement[bool]] = []
        if expiry.default_days is not None:
            own = Session.settings["retention_days"].as_integer()
            days = func.coalesce(own, expiry.default_days)
            terms += [days > 0, self._before(expiry.now, days)]
        if expiry.older_than is not None:
            terms.append(Session.updated_at < expiry.now - expiry.older_than)
        if expiry.tenant is not None:
            terms.append(Session.tenant == expiry.tenant)
        if expiry.id_prefix:
            prefix = expiry.id_prefix
            terms.append(func.substr(Session.external_id, 1, len(prefix)) == prefix)
        return and_(*terms)

    async def delete_batch(self, expiry: Expiry, limit: int) -> Deleted:
        """Delete up to `limit` expired sessions no other sweeper holds."""
        taken = (
            select(Session.pk)
            .where(self.condition(expiry))
            .order_by(Session.pk)
            .limit(limit)
            .with_for_update(skip_locked=True)
        )
        stmt = (
            delete(Session)
            .where(Session.pk.in_(taken.scalar_subquery()))
            .returning(Session.last_seq - Session.removed_count)
        )
        counts = (await self.db.execute(stmt)).scalars().all()
        return Deleted(sessions=len(counts), messages=int(sum(counts)))

    async def count(self, expiry: Expiry) -> Deleted:
        """What deleting would remove (a dry run)."""
        stmt = select(
            func.count(), func.coalesce(func.sum(Session.last_seq - Session.removed_count), 0)
        )
        sessions, messages = (await self.db.execute(stmt.where(self.condition(expiry)))).one()
        return Deleted(sessions=int(sessions), messages=int(messages))

    async def delete_stale_shared_rows(self, cutoff: datetime, limit: int) -> int:
        """Summary cache entries written, and calibrations last updated, before `cutoff`: rows
        of no one session (content-keyed; tenant-wide, a few per tenant) that retention ages
        out as well."""
        key = SummaryCacheEntry.key
        stale = (
            select(key)
            .where(SummaryCacheEntry.created_at < cutoff)
            .limit(limit)
            .with_for_update(skip_locked=True)
        )
        cache = delete(SummaryCacheEntry).where(key.in_(stale.scalar_subquery())).returning(key)
        calibrations = (
            delete(Calibration).where(Calibration.updated_at < cutoff).returning(Calibration.family)
        )
        removed = len((await self.db.execute(cache)).all())
        return removed + len((await self.db.execute(calibrations)).all())
