"""Session queries, always scoped by tenant: another tenant's session does not exist."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from sqlalchemy import ColumnElement, and_, delete, func, or_, select, update
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncSession
from sqlalchemy.orm import InstrumentedAttribute, load_only

from app.core.errors import SessionExists, SessionNotFound
from app.models import Session
from app.models.base import utcnow
from app.schemas.sessions import SessionSort, SortOrder

# The column each sort reads; message_count = last_seq − removed_count and total_tokens =
# live_tokens (see `stats`), so sorting needs no aggregate over messages. No index per sort: every
# append updates updated_at, last_seq and live_tokens, and indexing them would cost each
# append (and PostgreSQL's HOT updates) to speed up a listing; a sorted page reads the
# tenant's rows and keeps the top `limit`. `sort=id` follows the (tenant, external_id)
# unique index. The id prefix is a substr() equality (collation-proof, case-sensitive on
# both databases), so it filters the tenant's rows rather than seeking the index.
SORT_COLUMNS: dict[SessionSort, InstrumentedAttribute[Any] | ColumnElement[Any]] = {
    SessionSort.updated_at: Session.updated_at,
    SessionSort.message_count: Session.last_seq - Session.removed_count,
    SessionSort.total_tokens: Session.live_tokens,
    SessionSort.summary_version: Session.summary_version,
    SessionSort.created_at: Session.created_at,
    SessionSort.id: Session.external_id,
}


@dataclass(frozen=True, slots=True)
class SessionStats:
    message_count: int  # every stored message
    total_tokens: int  # tokens of the messages after the clear marker


class SessionRepository:
    def __init__(self, db: AsyncSession, tenant: str) -> None:
        self.db = db
        self.tenant = tenant

    async def get(self, session_id: str, *only: Any) -> Session | None:
        """The session row; with `only` (columns), just those are loaded (the others must
        not be read: they would be loaded lazily, which async sessions refuse)."""
        stmt = select(Session).where(
            Session.tenant == self.tenant, Session.external_id == session_id
        )
        if only:
            stmt = stmt.options(load_only(*only))
        return (await self.db.execute(stmt)).scalar_one_or_none()

    async def get_or_raise(self, session_id: str, *only: Any) -> Session:
        row = await self.get(session_id, *only)
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

    async def list_page(
        self,
        *,
        sort: SessionSort | None,
        order: SortOrder,
        after: tuple[Any, int] | None,
        limit: int,
        id_prefix: str | None = None,
    ) -> list[Session]:
        """`limit` sessions by (sort column, pk) in `order`, after the keyset `after`.

        `sort=None` is creation order (the surrogate key alone). Ties on the sort column
        are broken by pk in the same direction, so (value, pk) is a total order and a
        keyset position is exact. `id_prefix` is case-sensitive and compared by
        substring, not LIKE (SQLite's LIKE ignores ASCII case; `_` would be a wildcard).
        """
        desc = order is SortOrder.desc
        stmt = select(Session).where(Session.tenant == self.tenant)
        if id_prefix:
            stmt = stmt.where(func.substr(Session.external_id, 1, len(id_prefix)) == id_prefix)
        if sort is None:
            if after is not None:
                stmt = stmt.where(Session.pk < after[1] if desc else Session.pk > after[1])
            stmt = stmt.order_by(Session.pk.desc() if desc else Session.pk)
        else:
            column = SORT_COLUMNS[sort]
            if after is not None:
                value, pk = after
                if desc:
                    beyond = or_(column < value, and_(column == value, Session.pk < pk))
                else:
                    beyond = or_(column > value, and_(column == value, Session.pk > pk))
                stmt = stmt.where(beyond)
            if desc:
                stmt = stmt.order_by(column.desc(), Session.pk.desc())
            else:
                stmt = stmt.order_by(column, Session.pk)
        return list((await self.db.execute(stmt.limit(limit))).scalars())

    @staticmethod
    def stats(row: Session) -> SessionStats:
        # Seqs are never reused; messages leave with their session or one by one from the end
        # (DELETE …/messages/last, counted in removed_count).
        message_count = row.last_seq - row.removed_count
        return SessionStats(message_count=message_count, total_tokens=row.live_tokens)

    @staticmethod
    def sort_value(row: Session, sort: SessionSort) -> Any:
        """The value of `row` the sort `sort` orders by (a keyset cursor's position)."""
        if sort is SessionSort.message_count:
            return row.last_seq - row.removed_count
        column = SORT_COLUMNS[sort]
        assert isinstance(column, InstrumentedAttribute)  # the other sorts read one column
        return getattr(row, column.key)

    async def delete(self, row: Session) -> None:
        # Messages and summaries go with it (ON DELETE CASCADE), in this one statement.
        await self.db.execute(delete(Session).where(Session.pk == row.pk))

    async def delete_by_prefix(self, id_prefix: str) -> int:
        """Delete the tenant's sessions whose id starts with `id_prefix` (case-sensitive, as
        `list_page` filters), each with every row it owns; how many went."""
        stmt = (
            delete(Session)
            .where(
                Session.tenant == self.tenant,
                func.substr(Session.external_id, 1, len(id_prefix)) == id_prefix,
            )
            .returning(Session.pk)
        )
        return len((await self.db.execute(stmt)).all())

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

    async def reload(self, row: Session) -> None:
        """Read `row` again (after taking its lock: the state no other writer can change)."""
        await self.db.refresh(row)

    async def remove_newest(self, row: Session, tokens: int) -> None:
        """Account for the newest message, after the clear marker, being deleted: seqs are
        not reused (last_seq stays), updated_at moves (the response cache sees it)."""
        stmt = (
            update(Session)
            .where(Session.pk == row.pk)
            .values(
                live_tokens=Session.live_tokens - tokens,
                removed_count=Session.removed_count + 1,
                live_removed=Session.live_removed + 1,
                updated_at=utcnow(),
            )
            .execution_options(synchronize_session=False)
        )
        await self.db.execute(stmt)

    async def reserve_seqs(self, row: Session, count: int, tokens: int) -> int:
        """`lock_for_append` and `advance_seq` in one statement, for `count` new messages of
        `tokens` in all: the session's new last seq (the new messages end there)."""
        stmt = (
            update(Session)
            .where(Session.pk == row.pk)
            .values(
                last_seq=Session.last_seq + count,
                live_tokens=Session.live_tokens + tokens,
                updated_at=utcnow(),
            )
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
