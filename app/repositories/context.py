"""The reads a context needs, shaped so their cost does not grow with the session's length.

A context only needs the messages after the summary (`seq > summary_through_seq`) and the
pinned first user message; both are range scans on the unique (session_id, seq) index.
Everything after the clear marker is read only for `explain=true`.
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import select, update
from sqlalchemy.ext.asyncio import AsyncSession

from app.models import Message, Session

# The pinned message is the first user message that is not a tool result; tool results are
# also role "user", so candidates are read in pages and checked in Python. The first page of
# 16 almost always holds it (the task is message 1); later pages double, up to 1024 rows,
# so even a transcript opening with thousands of tool results takes a dozen queries.
PINNED_PAGE = 16
MAX_PINNED_PAGE = 1024


class ContextRepository:
    def __init__(self, db: AsyncSession) -> None:
        self.db = db

    async def messages_after(self, session_pk: int, after_seq: int) -> list[Message]:
        stmt = (
            select(Message)
            .where(Message.session_id == session_pk, Message.seq > after_seq)
            .order_by(Message.seq)
        )
        return list((await self.db.execute(stmt)).scalars())

    async def user_messages_page(
        self, session_pk: int, *, after_seq: int, through_seq: int, limit: int = PINNED_PAGE
    ) -> list[Message]:
        """Up to `limit` user messages with after_seq < seq ≤ through_seq, in seq order."""
        stmt = (
            select(Message)
            .where(
                Message.session_id == session_pk,
                Message.seq > after_seq,
                Message.seq <= through_seq,
                Message.role == "user",
            )
            .order_by(Message.seq)
            .limit(limit)
        )
        return list((await self.db.execute(stmt)).scalars())

    async def message_at(self, session_pk: int, seq: int) -> Message | None:
        stmt = select(Message).where(Message.session_id == session_pk, Message.seq == seq)
        return (await self.db.execute(stmt)).scalar_one_or_none()

    async def record_served(self, session_pk: int, model: str, record: dict[str, Any]) -> None:
        """Remember the context just served for `model` (app/services/prompt_cache.py)."""
        stmt = select(Session.last_context).where(Session.pk == session_pk).with_for_update()
        current: dict[str, Any] = dict((await self.db.execute(stmt)).scalar_one_or_none() or {})
        current[model] = record
        await self.db.execute(
            update(Session)
            .where(Session.pk == session_pk)
            .values(last_context=current, updated_at=Session.updated_at)
            .execution_options(synchronize_session=False)
        )
