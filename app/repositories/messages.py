"""Message queries. Messages are only ever inserted; nothing here updates or deletes one."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from app.models import Message


class MessageRepository:
    def __init__(self, db: AsyncSession) -> None:
        self.db = db

    async def by_client_ids(self, session_pk: int, client_ids: Iterable[str]) -> dict[str, Message]:
        wanted = sorted(set(client_ids))
        if not wanted:
            return {}
        stmt = select(Message).where(
            Message.session_id == session_pk, Message.client_id.in_(wanted)
        )
        return {
            row.client_id: row for row in (await self.db.execute(stmt)).scalars() if row.client_id
        }

    async def add_all(self, rows: Sequence[Message]) -> None:
        self.db.add_all(rows)
        await self.db.flush()

    async def list_after(self, session_pk: int, *, after_seq: int, limit: int) -> list[Message]:
        """Up to `limit` messages with seq > after_seq, in seq order."""
        stmt = (
            select(Message)
            .where(Message.session_id == session_pk, Message.seq > after_seq)
            .order_by(Message.seq)
            .limit(limit)
        )
        return list((await self.db.execute(stmt)).scalars())
