"""Session use cases: create, page, read, update, delete (the routes stay thin)."""

from __future__ import annotations

import json
import re
import uuid
from datetime import datetime
from typing import Any

from sqlalchemy.ext.asyncio import AsyncSession

from app.core.cursors import decode_cursor, decode_text, encode_cursor, encode_text, not_issued
from app.core.errors import CursorMismatch
from app.core.settings import Settings
from app.engine.shapes import validate_tools
from app.models import Session
from app.repositories import SessionRepository, SessionStats
from app.repositories.folds import SUMMARY_COLUMNS
from app.schemas.common import SummaryState
from app.schemas.sessions import (
    SESSION_ID_PATTERN,
    SessionCreate,
    SessionPage,
    SessionRead,
    SessionsDeleted,
    SessionSort,
    SessionUpdate,
    SortOrder,
)
from app.summarizers.factory import require_allowed
from app.tokens.registry import ModelRegistry

CURSOR_KIND = "s1"  # session pages in creation order, by surrogate key


# Cursors of the other orders, and of creation order with `order=desc` or an id filter:
# "s2:" + JSON of the listing they were made for and the keyset of the last row.
_SORTED_PREFIX = "s2:"
_INT_MAX = 2**31 - 1  # the columns are 32-bit; a larger value could not be bound
_CREATION = "pk"


def _wire_value(value: Any) -> Any:
    return value.isoformat() if isinstance(value, datetime) else value


def encode_page_cursor(
    sort: SessionSort | None, order: SortOrder, id_prefix: str | None, value: Any, pk: int
) -> str:
    """The cursor after the row (value, pk) of one listing; plain creation order keeps the
    cursors it always had, so clients that never pass `sort` see no change."""
    if sort is None and order is SortOrder.asc and not id_prefix:
        return encode_cursor(CURSOR_KIND, pk)
    listing = {
        "s": sort.value if sort else _CREATION,
        "o": order.value,
        "q": id_prefix or "",
        "v": _wire_value(value) if sort else None,
        "k": pk,
    }
    return encode_text(_SORTED_PREFIX + json.dumps(listing, separators=(",", ":")))


def _value_for(sort: SessionSort, raw: Any) -> Any:
    """The typed sort value from a cursor; ValueError when it cannot be one."""
    if sort in (SessionSort.updated_at, SessionSort.created_at):
        if not isinstance(raw, str):
            raise ValueError(raw)
        moment = datetime.fromisoformat(raw)
        if moment.tzinfo is None:
            raise ValueError(raw)
        return moment
    if sort is SessionSort.id:
        if not isinstance(raw, str) or not re.fullmatch(SESSION_ID_PATTERN, raw):
            raise ValueError(raw)
        return raw
    if type(raw) is not int or not 0 <= raw <= _INT_MAX:
        raise ValueError(raw)
    return raw


def decode_page_cursor(
    cursor: str, sort: SessionSort | None, order: SortOrder, id_prefix: str | None
) -> tuple[Any, int]:
    """The keyset (value, pk) a cursor points after, for this listing.

    InvalidCursor for anything we did not issue; CursorMismatch (also 422) for a cursor
    issued for another sort, order or id filter: its position means nothing here.
    """
    text = decode_text(cursor)
    made_for: dict[str, Any]
    if text.startswith(f"{CURSOR_KIND}:"):
        pk = decode_cursor(CURSOR_KIND, cursor)
        made_for = {"sort": None, "order": SortOrder.asc.value, "id_prefix": None}
        value = None
    else:
        try:
            if not text.startswith(_SORTED_PREFIX):
                raise ValueError(text)
            listing = json.loads(text[len(_SORTED_PREFIX) :])
            if not isinstance(listing, dict) or set(listing) != {"s", "o", "q", "v", "k"}:
                raise ValueError(text)
            made_sort = None if listing["s"] == _CREATION else SessionSort(listing["s"])
            made_order = SortOrder(listing["o"])
            made_prefix = listing["q"]
            if not isinstance(made_prefix, str):
                raise ValueError(text)
            pk = listing["k"]
            if type(pk) is not int or not 0 <= pk <= _INT_MAX:
                raise ValueError(text)
            if made_sort is None:
                if listing["v"] is not None:
                    raise ValueError(text)
                value = None
            else:
                value = _value_for(made_sort, listing["v"])
            # Only the exact text issued: no reordered keys, spaces or other spellings.
            if encode_page_cursor(made_sort, made_order, made_prefix, value, pk) != cursor:
                raise ValueError(text)
        except (ValueError, TypeError, RecursionError) as exc:  # RecursionError: deep JSON
            raise not_issued(cursor) from exc
        made_for = {
            "sort": made_sort.value if made_sort else None,
            "order": made_order.value,
            "id_prefix": made_prefix or None,
        }
    asked = {
        "sort": sort.value if sort else None,
        "order": order.value,
        "id_prefix": id_prefix or None,
    }
    if made_for != asked:
        raise CursorMismatch(
            "cursor was issued for another sort, order or id_prefix; start again without it",
            {"cursor_for": made_for, "request": asked},
        )
    return value, pk


def stored_summary(row: Session) -> SummaryState:
    """The session's summary as stored: version 0 and no text before the first fold."""
    fields = {field: getattr(row, column) for field, column in SUMMARY_COLUMNS.items()}
    return SummaryState(version=row.summary_version, **fields)


def summary_state(row: Session) -> SummaryState | None:
    """The wire summary object, or None before the first fold (or clear)."""
    return stored_summary(row) if row.summary_version else None


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
        settings = body.settings.model_dump(exclude_none=True)
        require_allowed(self.settings, settings.get("summarizer"))
        row = await self.repo.create(
            body.id or str(uuid.uuid4()),
            model=model,
            system_prompt=body.system_prompt,
            tools=validate_tools(body.tools) if body.tools is not None else None,
            settings=settings,
            meta=body.metadata,
            last_context={},
        )
        return session_read(row, SessionStats(message_count=0, total_tokens=0))

    async def page(
        self,
        *,
        limit: int,
        cursor: str | None,
        sort: SessionSort | None = None,
        order: SortOrder = SortOrder.asc,
        id_prefix: str | None = None,
    ) -> SessionPage:
        id_prefix = id_prefix or None
        after = decode_page_cursor(cursor, sort, order, id_prefix) if cursor else None
        rows = await self.repo.list_page(
            sort=sort, order=order, after=after, limit=limit + 1, id_prefix=id_prefix
        )
        has_more = len(rows) > limit
        rows = rows[:limit]
        sessions = [session_read(row, self.repo.stats(row)) for row in rows]
        next_cursor = None
        if has_more and rows:
            last = rows[-1]
            value = self.repo.sort_value(last, sort) if sort else None
            next_cursor = encode_page_cursor(sort, order, id_prefix, value, last.pk)
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
            require_allowed(self.settings, overrides.get("summarizer"))
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

    async def delete_by_prefix(self, id_prefix: str) -> SessionsDeleted:
        return SessionsDeleted(deleted=await self.repo.delete_by_prefix(id_prefix))
