"""Summary history queries: every version a session's summary went through, newest first."""

from __future__ import annotations

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from app.models import Summary


class SummaryRepository:
    def __init__(self, db: AsyncSession) -> None:
        self.db = db

    async def page(
        self, session_pk: int, *, before_version: int | None, limit: int
    ) -> list[Summary]:
        """Up to `limit` history rows with version < `before_version` (all when None),
        newest first; (session_id, version) is unique, so its index serves this query."""
        stmt = select(Summary).where(Summary.session_id == session_pk)
        if before_version is not None:
            stmt = stmt.where(Summary.version < before_version)
        stmt = stmt.order_by(Summary.version.desc()).limit(limit)
        return list((await self.db.execute(stmt)).scalars())
