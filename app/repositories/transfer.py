"""The rows of one session as they are stored, read in keyset pages and written back in
batches: export, import and the database copy share these statements.

A row is handled as a mapping of column *names* (`metadata`, not the attribute `meta`), so
every column of the three tables travels without a list kept by hand; `SESSION_LOCAL` names
the columns that belong to one database only (keys, tenant, a running fold's lease).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from sqlalchemy import Column, Table, func, insert, select, tuple_, update
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncSession

from app.core.errors import MessageIdsTaken, SessionExists
from app.models import Calibration, Message, Session, Summary

Row = dict[str, Any]

SESSION_LOCAL = frozenset({"pk", "tenant", "external_id", "fold_lease_owner", "fold_lease_until"})
MESSAGE_LOCAL = frozenset({"session_id"})
SUMMARY_LOCAL = frozenset({"id", "session_id"})


def _table(model: Any) -> Table:
    table = model.__table__
    assert isinstance(table, Table)
    return table


SESSIONS, MESSAGES, SUMMARIES = _table(Session), _table(Message), _table(Summary)


def _columns(table: Table, local: frozenset[str]) -> list[Column[Any]]:
    return [column for column in table.columns if column.name not in local]


SESSION_COLUMNS = _columns(SESSIONS, SESSION_LOCAL)
MESSAGE_COLUMNS = _columns(MESSAGES, MESSAGE_LOCAL)
SUMMARY_COLUMNS = _columns(SUMMARIES, SUMMARY_LOCAL)


def _rows(result: Any) -> list[Row]:
    return [dict(row) for row in result.mappings()]


class TransferRepository:
    """Reads and writes by session surrogate key; the caller resolved the tenant's session."""

    def __init__(self, db: AsyncSession) -> None:
        self.db = db

    async def sessions_after(self, after_pk: int, limit: int) -> list[tuple[int, str, str]]:
        """(pk, tenant, id) of every tenant's sessions after `after_pk`, in pk order."""
        stmt = (
            select(Session.pk, Session.tenant, Session.external_id)
            .where(Session.pk > after_pk)
            .order_by(Session.pk)
            .limit(limit)
        )
        return [(int(pk), tenant, sid) for pk, tenant, sid in (await self.db.execute(stmt)).all()]

    async def shared_rows(self, model: Any, after: tuple[Any, ...] | None, limit: int) -> list[Row]:
        """A page of a table of no one session (calibrations, the summary cache), in primary
        key order after the key `after`."""
        table = _table(model)
        keys = list(table.primary_key.columns)
        stmt = select(table).order_by(*keys).limit(limit)
        if after is not None:
            stmt = stmt.where(tuple_(*keys) > tuple_(*after))
        return _rows(await self.db.execute(stmt))

    async def upsert_shared(self, model: Any, rows: Sequence[Mapping[str, Any]]) -> None:
        """Insert rows of a shared table; a row whose key is stored takes the copied values."""
        if not rows:
            return
        table = _table(model)
        dialect = self.db.get_bind().dialect.name
        insert_ = postgresql.insert if dialect == "postgresql" else sqlite.insert
        stmt = insert_(table)
        keys = [column.name for column in table.primary_key.columns]
        others = {c.name: stmt.excluded[c.name] for c in table.columns if c.name not in keys}
        await self.db.execute(stmt.on_conflict_do_update(index_elements=keys, set_=others), rows)

    async def session_row(self, tenant: str, session_id: str) -> tuple[int, Row] | None:
        """(pk, stored columns) of the tenant's session, or None."""
        return await self._session(Session.tenant == tenant, Session.external_id == session_id)

    async def session_row_by_pk(self, session_pk: int) -> Row | None:
        found = await self._session(Session.pk == session_pk)
        return found[1] if found else None

    async def _session(self, *where: Any) -> tuple[int, Row] | None:
        stmt = select(Session.pk, *SESSION_COLUMNS).where(*where)
        found = _rows(await self.db.execute(stmt))
        if not found:
            return None
        row = found[0]
        return int(row.pop("pk")), row

    async def messages_after(self, session_pk: int, after_seq: int, limit: int) -> list[Row]:
        return await self._page(MESSAGES, MESSAGE_COLUMNS, "seq", session_pk, after_seq, limit)

    async def summaries_after(self, session_pk: int, after_version: int, limit: int) -> list[Row]:
        return await self._page(
            SUMMARIES, SUMMARY_COLUMNS, "version", session_pk, after_version, limit
        )

    async def _page(
        self,
        table: Table,
        columns: list[Column[Any]],
        key: str,
        session_pk: int,
        after: int,
        limit: int,
    ) -> list[Row]:
        """Up to `limit` rows of the session after `after` in `key` order; the unique
        (session_id, key) index serves it."""
        order = table.c[key]
        stmt = (
            select(*columns)
            .where(table.c.session_id == session_pk, order > after)
            .order_by(order)
            .limit(limit)
        )
        return _rows(await self.db.execute(stmt))

    async def calibration(self, tenant: str, family: str) -> Row | None:
        stmt = select(
            Calibration.family, Calibration.ratio, Calibration.samples, Calibration.updated_at
        )
        found = _rows(
            await self.db.execute(
                stmt.where(Calibration.tenant == tenant, Calibration.family == family)
            )
        )
        return found[0] if found else None

    async def add_calibration(self, tenant: str, row: Mapping[str, Any]) -> None:
        """The tenant's calibration of a family, unless it has learned one already."""
        dialect = self.db.get_bind().dialect.name
        insert_ = postgresql.insert if dialect == "postgresql" else sqlite.insert
        stmt = insert_(Calibration).values(tenant=tenant, **row).on_conflict_do_nothing()
        await self.db.execute(stmt)

    async def newest(self, session_pk: int) -> tuple[int, int]:
        """(highest message seq, highest summary version) stored: where a copy resumes."""
        seq = select(func.coalesce(func.max(Message.seq), 0)).where(
            Message.session_id == session_pk
        )
        version = select(func.coalesce(func.max(Summary.version), 0)).where(
            Summary.session_id == session_pk
        )
        return int(await self.db.scalar(seq) or 0), int(await self.db.scalar(version) or 0)

    async def insert_session(self, tenant: str, session_id: str, row: Mapping[str, Any]) -> int:
        """The session row as exported; SessionExists when the tenant has that id."""
        values = {"tenant": tenant, "external_id": session_id, **row}
        try:
            async with self.db.begin_nested():
                stmt = insert(SESSIONS).values(values).returning(Session.pk)
                return int((await self.db.execute(stmt)).scalar_one())
        except IntegrityError as exc:
            raise SessionExists(session_id) from exc

    async def replace_session(self, session_pk: int, row: Mapping[str, Any]) -> None:
        stmt = update(SESSIONS).where(Session.pk == session_pk).values(dict(row))
        await self.db.execute(stmt)

    async def insert_messages(self, session_pk: int, rows: Sequence[Mapping[str, Any]]) -> None:
        if not rows:
            return
        values = [{**row, "session_id": session_pk} for row in rows]
        try:
            async with self.db.begin_nested():
                await self.db.execute(insert(MESSAGES), values)
        except IntegrityError as exc:
            raise MessageIdsTaken(
                "a message id or client_id clashes with a stored one (message ids are unique "
                "across the server: another session holds this export's messages)",
                {"first_seq": rows[0]["seq"], "last_seq": rows[-1]["seq"]},
            ) from exc

    async def insert_summaries(self, session_pk: int, rows: Sequence[Mapping[str, Any]]) -> None:
        if rows:
            values = [{**row, "session_id": session_pk} for row in rows]
            await self.db.execute(insert(SUMMARIES), values)
