"""Message queries. Messages are only ever inserted; nothing here updates or deletes one."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from sqlalchemy import Text, cast, or_, select
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

    async def call_ids_in_use(
        self, session_pk: int, after_seq: int, call_ids: Sequence[str]
    ) -> set[str]:
        """Which of `call_ids` a stored message after `after_seq` already makes.

        The JSON text is searched for `"id": "<id>"` (both databases render JSON with that
        separator, and tool ids are ASCII by the door's rule); matches are then confirmed on
        the parsed rows, so a text that merely mentions an id is no clash.
        """
        if not call_ids:
            return set()
        needles = [f'"id": "{call_id}"' for call_id in call_ids]
        columns = (cast(Message.content, Text), cast(Message.tool_calls, Text))
        stmt = select(Message).where(
            Message.session_id == session_pk,
            Message.seq > after_seq,
            or_(*(column.contains(n, autoescape=True) for n in needles for column in columns)),
        )
        wanted = set(call_ids)
        found: set[str] = set()
        for row in (await self.db.execute(stmt)).scalars():
            blocks = row.content if isinstance(row.content, list) else []
            ids = [c.get("id") for c in row.tool_calls or ()]
            ids += [
                b.get("id") for b in blocks if isinstance(b, dict) and b.get("type") == "tool_use"
            ]
            found.update(i for i in ids if i in wanted)
        return found

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
