"""The reads a context needs, shaped so their cost does not grow with the session's length.

A context only needs the messages after the summary (`seq > summary_through_seq`) and the
pinned first user message; both are range scans on the unique (session_id, seq) index.
Everything after the clear marker is read only for `explain=true`.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any, NamedTuple

from sqlalchemy import Row, and_, bindparam, select, update
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncSession

from app.core.errors import SessionNotFound
from app.engine.calibration import Calibration as CalibrationValue
from app.engine.types import Message as EngineMessage
from app.models import Calibration, Message, Session

# The pinned message is the first user message that is not a tool result; tool results are
# also role "user", so candidates are read in pages and checked in Python. The first page of
# 16 almost always holds it (the task is message 1); later pages double, up to 1024 rows,
# so even a transcript opening with thousands of tool results takes a dozen queries.
PINNED_PAGE = 16
MAX_PINNED_PAGE = 1024


@dataclass(frozen=True, slots=True)
class SessionVersion:
    """The columns of a session row that change whenever its context can: appends bump
    `last_seq` and `updated_at`, folds and clears `summary_version` (clears also
    `cleared_through_seq`), PATCH `updated_at`, delete-and-recreate `pk`."""

    pk: int
    updated_at: datetime
    last_seq: int
    cleared_through_seq: int
    summary_version: int


def session_version(row: Session) -> SessionVersion:
    return SessionVersion(
        row.pk, row.updated_at, row.last_seq, row.cleared_through_seq, row.summary_version
    )


@dataclass(frozen=True, slots=True)
class ServedState:
    """One read of everything a served context depends on besides its query and messages."""

    version: SessionVersion
    last_context: dict[str, Any]
    calibration: tuple[float, int] | None  # (ratio, samples) of the model family, if any


# Built once: the validating read of every cached GET context skips statement construction
# and cache-key generation (~0.1 ms each time on this path).
SERVED_STATE = (
    select(
        Session.pk,
        Session.updated_at,
        Session.last_seq,
        Session.cleared_through_seq,
        Session.summary_version,
        Session.last_context,
        Calibration.ratio,
        Calibration.samples,
    )
    .outerjoin(
        Calibration,
        and_(Calibration.tenant == Session.tenant, Calibration.family == bindparam("family")),
    )
    .where(Session.tenant == bindparam("tenant"), Session.external_id == bindparam("session_id"))
)


async def served_state(
    connection: AsyncConnection, tenant: str, session_id: str, family: str
) -> ServedState | None:
    """The session's version, its served records and the family's calibration in one
    statement: a unique-index lookup on `sessions` joined to the calibration primary key."""
    params = {"tenant": tenant, "session_id": session_id, "family": family}
    row = (await connection.execute(SERVED_STATE, params)).one_or_none()
    if row is None:
        return None
    pk, updated_at, last_seq, cleared, version, last_context, ratio, samples = row
    return ServedState(
        version=SessionVersion(pk, updated_at, last_seq, cleared, version),
        last_context=dict(last_context or {}),
        calibration=None if ratio is None else (ratio, samples),
    )


# The message reads of GET …/context, built once and returning plain rows: no statement
# construction or cache key per request, no ORM instances (identity map, instance state) for
# rows that only become engine messages.
_MESSAGE_FIELDS = (
    Message.id,
    Message.seq,
    Message.role,
    Message.content,
    Message.token_count,
    Message.name,
    Message.tool_calls,
    Message.tool_call_id,
    Message.meta.label("meta"),
)
MESSAGES_AFTER = (
    select(*_MESSAGE_FIELDS)
    .where(Message.session_id == bindparam("pk"), Message.seq > bindparam("after_seq"))
    .order_by(Message.seq)
)
# Messages the summary covers, for explain: what it reports of them.
COVERED = (
    select(Message.id, Message.seq, Message.token_count)
    .where(
        Message.session_id == bindparam("pk"),
        Message.seq > bindparam("after_seq"),
        Message.seq <= bindparam("through"),
    )
    .order_by(Message.seq)
)
USER_MESSAGES_PAGE = (
    select(*_MESSAGE_FIELDS)
    .where(
        Message.session_id == bindparam("pk"),
        Message.seq > bindparam("after_seq"),
        Message.seq <= bindparam("through"),
        Message.role == "user",
    )
    .order_by(Message.seq)
    .limit(bindparam("limit"))
)


class Covered(NamedTuple):
    """A message the summary covers, as explain lists it."""

    id: str
    seq: int
    tokens: int


def to_engine(row: Row[Any] | Message) -> EngineMessage:
    """A message row (the context reads' plain rows, or a stored `Message`) for the engine."""
    return EngineMessage(
        id=row.id,
        seq=row.seq,
        role=row.role,  # type: ignore[arg-type]  # stored roles are validated Roles
        content=row.content,
        tokens=row.token_count,
        name=row.name,
        tool_calls=row.tool_calls,
        tool_call_id=row.tool_call_id,
        metadata=dict(row.meta or {}),
    )


class ContextRepository:
    def __init__(self, db: AsyncSession) -> None:
        self.db = db

    async def session_for_context(
        self, tenant: str, session_id: str
    ) -> tuple[Session, dict[str, CalibrationValue]]:
        """The session row and the tenant's calibrations by family, in one round trip (a
        tenant calibrates a handful of model families, so the join adds a few rows)."""
        stmt = (
            select(Session, Calibration)
            .outerjoin(Calibration, Calibration.tenant == Session.tenant)
            .where(Session.tenant == tenant, Session.external_id == session_id)
        )
        rows = (await self.db.execute(stmt)).all()
        if not rows:
            raise SessionNotFound(session_id)
        calibrations = {
            c.family: CalibrationValue(family=c.family, ratio=c.ratio, samples=c.samples)
            for _, c in rows
            if c is not None
        }
        return rows[0][0], calibrations

    async def messages_after(self, session_pk: int, after_seq: int) -> list[EngineMessage]:
        params = {"pk": session_pk, "after_seq": after_seq}
        return [to_engine(row) for row in await self.db.execute(MESSAGES_AFTER, params)]

    async def covered(self, session_pk: int, after_seq: int, through_seq: int) -> list[Covered]:
        """(id, seq, tokens) of the messages with after_seq < seq ≤ through_seq."""
        params = {"pk": session_pk, "after_seq": after_seq, "through": through_seq}
        return [Covered(*row) for row in await self.db.execute(COVERED, params)]

    async def user_messages_page(
        self, session_pk: int, *, after_seq: int, through_seq: int, limit: int = PINNED_PAGE
    ) -> list[EngineMessage]:
        """Up to `limit` user messages with after_seq < seq ≤ through_seq, in seq order."""
        params = {"pk": session_pk, "after_seq": after_seq, "through": through_seq, "limit": limit}
        return [to_engine(row) for row in await self.db.execute(USER_MESSAGES_PAGE, params)]

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
