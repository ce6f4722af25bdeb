"""Message queries. Messages are inserted, never updated; the only delete is of a session's
newest message, by its owner (DELETE …/messages/last). Summarization never deletes one."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from sqlalchemy import Text, cast, delete, or_, select
from sqlalchemy.ext.asyncio import AsyncSession

from app.engine.types import call_ids_of
from app.models import Message

# Ids searched per query: SQLite caps an expression tree at depth 1,000, and an OR of n
# terms is n deep (two LIKEs per id). Input validation allows at most 2,000 calls per request.
CALL_IDS_PER_QUERY = 100


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
        separator, and tool ids are ASCII by the input rules); matches are then confirmed on
        the parsed rows, so a text that merely mentions an id is no clash.
        """
        wanted = set(call_ids)
        found: set[str] = set()
        columns = (cast(Message.content, Text), cast(Message.tool_calls, Text))
        ordered = sorted(wanted)
        for start in range(0, len(ordered), CALL_IDS_PER_QUERY):
            needles = [f'"id": "{i}"' for i in ordered[start : start + CALL_IDS_PER_QUERY]]
            stmt = select(Message).where(
                Message.session_id == session_pk,
                Message.seq > after_seq,
                Message.role == "assistant",  # the only role that makes tool calls
                or_(*(c.contains(n, autoescape=True) for n in needles for c in columns)),
            )
            found.update(self._call_ids(await self.db.execute(stmt), wanted))
        return found

    @staticmethod
    def _call_ids(result: Any, wanted: set[str]) -> set[str]:
        found: set[str] = set()
        for row in result.scalars():
            found.update(i for i in call_ids_of(row.content, row.tool_calls) if i in wanted)
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

    async def newest(self, session_pk: int) -> Message | None:
        stmt = (
            select(Message)
            .where(Message.session_id == session_pk)
            .order_by(Message.seq.desc())
            .limit(1)
        )
        return (await self.db.execute(stmt)).scalar_one_or_none()

    async def remove(self, row: Message) -> None:
        await self.db.execute(delete(Message).where(Message.id == row.id))
