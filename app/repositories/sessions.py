"""Session queries, always scoped by tenant: another tenant's session does not exist."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from sqlalchemy import delete, select, update
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncSession

from app.core.errors import SessionExists, SessionNotFound
from app.models import Session
from app.models.base import utcnow


@dataclass(frozen=True, slots=True)
class SessionStats:
    message_count: int  # every stored message
    total_tokens: int  # tokens of the messages after the clear marker


class SessionRepository:
    def __init__(self, db: AsyncSession, tenant: str) -> None:
        self.db = db
        self.tenant = tenant

    async def get(self, session_id: str) -> Session | None:
        stmt = select(Session).where(
            Session.tenant == self.tenant, Session.external_id == session_id
        )
        return (await self.db.execute(stmt)).scalar_one_or_none()

    async def get_or_raise(self, session_id: str) -> Session:
        row = await self.get(session_id)
        if row is None:
            raise SessionNotFound(session_id)
        return row

    async def create(self, session_id: str, **fields: Any) -> Session:
        """Insert a session; SessionExists when this tenant already has that id."""
        row = Session(tenant=self.tenant, external_id=session_id, **fields)
        try:
            # A savepoint, so a lost race on the unique key leaves the request usable.
            async with self.db.begin_nested():
                self.db.add(row)
                await self.db.flush()
        except IntegrityError as exc:
            raise SessionExists(session_id) from exc
        return row

    async def list_page(self, *, after_pk: int, limit: int) -> list[Session]:
        """Sessions in creation order (surrogate key ascending), `limit` after `after_pk`."""
        stmt = (
            select(Session)
            .where(Session.tenant == self.tenant, Session.pk > after_pk)
            .order_by(Session.pk)
            .limit(limit)
        )
        return list((await self.db.execute(stmt)).scalars())

    @staticmethod
    def stats(row: Session) -> SessionStats:
        # Seqs are gap-free and messages leave only with their session: count = last_seq.
        return SessionStats(message_count=row.last_seq, total_tokens=row.live_tokens)

    async def delete(self, row: Session) -> None:
        # Messages and summaries go with it (ON DELETE CASCADE).
        await self.db.execute(delete(Session).where(Session.pk == row.pk))

    async def lock_for_append(self, row: Session) -> int:
        """Take the session's write lock and return its last seq.

        A no-op UPDATE … RETURNING: PostgreSQL row-locks the session until commit and SQLite
        takes its database write lock, so concurrent appends to one session run one after
        the other and see each other's client ids.
        """
        stmt = (
            update(Session)
            .where(Session.pk == row.pk)
            .values(updated_at=utcnow())
            .returning(Session.last_seq)
        )
        last_seq = (await self.db.execute(stmt)).scalar_one_or_none()
        if last_seq is None:  # deleted between the read and the lock
            raise SessionNotFound(row.external_id)
        return int(last_seq)

    async def advance_seq(self, row: Session, count: int, tokens: int) -> None:
        stmt = (
            update(Session)
            .where(Session.pk == row.pk)
            .values(last_seq=Session.last_seq + count, live_tokens=Session.live_tokens + tokens)
            .execution_options(synchronize_session=False)
        )
        await self.db.execute(stmt)
