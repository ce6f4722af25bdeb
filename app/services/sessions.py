"""Session use cases: create, page, read, update, delete (the routes stay thin)."""

from __future__ import annotations

import uuid
from typing import Any

from sqlalchemy.ext.asyncio import AsyncSession

from app.core.cursors import decode_cursor, encode_cursor
from app.core.settings import Settings
from app.engine.shapes import validate_tools
from app.models import Session
from app.repositories import SessionRepository, SessionStats
from app.schemas.common import SummaryState
from app.schemas.sessions import SessionCreate, SessionPage, SessionRead, SessionUpdate
from app.tokens.registry import ModelRegistry

CURSOR_KIND = "s1"  # session pages, ordered by surrogate key


def summary_state(row: Session) -> SummaryState | None:
    """The wire summary object, or None before the first fold (or clear)."""
    if row.summary_version == 0:
        return None
    return SummaryState(
        text=row.conversation_summary,
        version=row.summary_version,
        through_id=row.summary_through_id,
        through_seq=row.summary_through_seq,
        message_count=row.summary_message_count,
        tokens=row.summary_tokens,
        method=row.summary_method,
    )


def session_read(row: Session, stats: SessionStats) -> SessionRead:
    return SessionRead(
        id=row.external_id,
        model=row.model,
        system_prompt=row.system_prompt,
        tools=row.tools,
        settings=dict(row.settings or {}),
        metadata=dict(row.meta or {}),
        message_count=stats.message_count,
        total_tokens=stats.total_tokens,
        summary=summary_state(row),
        created_at=row.created_at,
        updated_at=row.updated_at,
    )


class SessionService:
    def __init__(
        self, db: AsyncSession, tenant: str, settings: Settings, registry: ModelRegistry
    ) -> None:
        self.repo = SessionRepository(db, tenant)
        self.settings = settings
        self.registry = registry

    async def create(self, body: SessionCreate) -> SessionRead:
        model = body.model or self.settings.default_model
        self.registry.get(model)  # UnknownModel (422) before anything is stored
        row = await self.repo.create(
            body.id or str(uuid.uuid4()),
            model=model,
            system_prompt=body.system_prompt,
            tools=validate_tools(body.tools) if body.tools is not None else None,
            settings=body.settings.model_dump(exclude_none=True),
            meta=body.metadata,
            last_context={},
        )
        return session_read(row, SessionStats(message_count=0, total_tokens=0))

    async def page(self, *, limit: int, cursor: str | None) -> SessionPage:
        after_pk = decode_cursor(CURSOR_KIND, cursor) if cursor else 0
        rows = await self.repo.list_page(after_pk=after_pk, limit=limit + 1)
        has_more = len(rows) > limit
        rows = rows[:limit]
        sessions = [session_read(row, self.repo.stats(row)) for row in rows]
        next_cursor = encode_cursor(CURSOR_KIND, rows[-1].pk) if has_more and rows else None
        return SessionPage(sessions=sessions, next_cursor=next_cursor)

    async def read(self, session_id: str) -> SessionRead:
        row = await self.repo.get_or_raise(session_id)
        return session_read(row, self.repo.stats(row))

    async def update(self, session_id: str, body: SessionUpdate) -> SessionRead:
        row = await self.repo.get_or_raise(session_id)
        changes: dict[str, Any] = body.model_dump(exclude_unset=True)
        if "model" in changes:
            model = changes["model"] or self.settings.default_model
            self.registry.get(model)
            row.model = model
        if "system_prompt" in changes:
            row.system_prompt = body.system_prompt
        if "tools" in changes:
            row.tools = validate_tools(body.tools) if body.tools is not None else None
        if "settings" in changes:
            merged = dict(row.settings or {})
            overrides = body.settings.model_dump(exclude_unset=True) if body.settings else {}
            for key, value in overrides.items():
                if value is None:
                    merged.pop(key, None)
                else:
                    merged[key] = value
            row.settings = merged
        if "metadata" in changes:
            row.meta = body.metadata or {}
        await self.repo.db.flush()
        await self.repo.db.refresh(row)
        return session_read(row, self.repo.stats(row))

    async def delete(self, session_id: str) -> None:
        await self.repo.delete(await self.repo.get_or_raise(session_id))
