"""The reads a context needs, declared once and shaped so their cost does not grow with the
session's length.

A context only needs the messages after the summary (`seq > summary_through_seq`) and the
pinned first user message; both are range scans on the unique (session_id, seq) index.
Everything after the clear marker is read only for `explain=true`.

Each read is one SQLAlchemy statement below, compiled once per dialect (driver_sql.py) and
run as driver SQL, whether through the app's engine (`ContextRepository`) or on the
connections of app/repositories/context_version.py and context_rows.py; rows come back as the
driver's raw values and are decoded by the one decoder of each read here. A column a
context depends on is added to `SESSION_FIELDS` or `MESSAGE_FIELDS` and to nothing else.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, NamedTuple

from sqlalchemy import and_, bindparam, func, select, tuple_, update
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncSession

from app.core.errors import SessionNotFound
from app.engine.calibration import Calibration as CalibrationValue
from app.engine.types import Message as EngineMessage
from app.models import Calibration, Message, Session
from app.repositories.driver_sql import DriverSQL

# The pinned message is the first user message that is not a tool result; tool results are
# also role "user", so candidates are read in pages and checked in Python. The first page of
# 16 almost always holds it (the task is message 1); later pages double, up to 1024 rows,
# so even a transcript opening with thousands of tool results takes a dozen queries.
PINNED_PAGE = 16
MAX_PINNED_PAGE = 1024

# The session columns a context reads, and the message columns, in the decoders' order.
SESSION_FIELDS = (
    Session.pk,
    Session.external_id,
    Session.model,
    Session.system_prompt,
    Session.tools,
    Session.settings,
    Session.updated_at,
    Session.last_seq,
    Session.conversation_summary,
    Session.summary_through_id,
    Session.summary_through_seq,
    Session.summary_version,
    Session.summary_message_count,
    Session.summary_tokens,
    Session.summary_method,
    Session.cleared_through_seq,
    Session.live_removed,
    Session.last_context,
)
MESSAGE_FIELDS = (
    Message.id,
    Message.seq,
    Message.role,
    Message.content,
    Message.token_count,
    Message.name,
    Message.tool_calls,
    Message.tool_call_id,
    Message.meta,
)
_JSON_SESSION_FIELDS = {"tools", "settings", "last_context"}
_CALIBRATION_FIELDS = (Calibration.family, Calibration.ratio, Calibration.samples)
_OF_SESSION = (
    Session.tenant == bindparam("tenant"),
    Session.external_id == bindparam("session_id"),
)

# The validating read of a cached GET …/context: the session's version, its served records
# and one family's calibration; two unique-index lookups.
CONTEXT_VERSION = DriverSQL(
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
    .where(*_OF_SESSION)
)
# The session row and the tenant's calibrations (a handful of families: a few rows).
CONTEXT_SESSION = DriverSQL(
    select(*SESSION_FIELDS, *_CALIBRATION_FIELDS)
    .outerjoin(Calibration, Calibration.tenant == Session.tenant)
    .where(*_OF_SESSION)
)
MESSAGES_AFTER = DriverSQL(
    select(*MESSAGE_FIELDS)
    .where(Message.session_id == bindparam("pk"), Message.seq > bindparam("after_seq"))
    .order_by(Message.seq)
)
# Messages the summary covers, for explain: what it reports of them.
COVERED = DriverSQL(
    select(Message.id, Message.seq, Message.token_count)
    .where(
        Message.session_id == bindparam("pk"),
        Message.seq > bindparam("after_seq"),
        Message.seq <= bindparam("through"),
    )
    .order_by(Message.seq)
)
USER_MESSAGES_PAGE = DriverSQL(
    select(*MESSAGE_FIELDS)
    .where(
        Message.session_id == bindparam("pk"),
        Message.seq > bindparam("after_seq"),
        Message.seq <= bindparam("through"),
        Message.role == "user",
    )
    .order_by(Message.seq)
    .limit(bindparam("limit"))
)


def _context_in_one_statement() -> DriverSQL:
    """PostgreSQL only: the three reads above in one statement, so one snapshot with no
    transaction around it and one round trip. The session row, then as arrays of rows the
    tenant's calibrations, the messages after the floor (`summary_through_seq`; after
    `after_seq` when that is later: the messages a context served before lacks) and the
    first page of user messages up to the floor (the pinned-message candidates). Explained
    contexts are read through the engine (they also list the covered messages)."""
    floor = func.greatest(Session.summary_through_seq, Session.cleared_through_seq)

    def rows(columns: Sequence[Any], *where: Any, limit: Any = None) -> Any:
        found = select(tuple_(*columns)).where(*where)
        if columns is MESSAGE_FIELDS:
            found = found.order_by(Message.seq).limit(limit)
        return func.array(found.scalar_subquery())

    of_session = Message.session_id == Session.pk
    live_floor = func.greatest(floor, bindparam("after_seq"))
    return DriverSQL(
        select(
            *SESSION_FIELDS,
            rows(_CALIBRATION_FIELDS, Calibration.tenant == Session.tenant),
            rows(MESSAGE_FIELDS, of_session, Message.seq > live_floor),
            rows(
                MESSAGE_FIELDS,
                of_session,
                Message.seq > Session.cleared_through_seq,
                Message.seq <= floor,
                Message.role == "user",
                limit=bindparam("limit"),
            ),
        ).where(*_OF_SESSION)
    )


CONTEXT_IN_ONE_STATEMENT = _context_in_one_statement()


# Decoding: values come out as the ORM's types would make them (`UTCDateTime`, JSON). SQLite
# hands back timestamps as naive ISO text. JSON comes as text from sqlite3 and from the
# context-version reader's own asyncpg connections, but decoded from SQLAlchemy's asyncpg
# connections (its dialect registers JSON codecs on them): `decoded` says which.
def _json(value: Any, decoded: bool) -> Any:
    return value if decoded or value is None else json.loads(value)


def json_decoded(connection: AsyncConnection) -> bool:
    """Whether the driver under this SQLAlchemy connection decodes JSON itself."""
    return connection.dialect.driver == "asyncpg"


def timestamp(value: Any) -> datetime:
    if isinstance(value, str):  # SQLite stores UTC without an offset
        value = datetime.fromisoformat(value)
    assert isinstance(value, datetime)
    return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)


class Covered(NamedTuple):
    """A message the summary covers, as explain lists it."""

    id: str
    seq: int
    tokens: int


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
class ContextVersion:
    """One read of everything a served context depends on besides its query and messages."""

    version: SessionVersion
    last_context: dict[str, Any]
    calibration: tuple[float, int] | None  # (ratio, samples) of the model family, if any


def context_version_row(row: Sequence[Any], decoded: bool = False) -> ContextVersion:
    """A `CONTEXT_VERSION` row."""
    pk, updated_at, last_seq, cleared, version, last_context, ratio, samples = row
    return ContextVersion(
        version=SessionVersion(pk, timestamp(updated_at), last_seq, cleared, version),
        last_context=dict(_json(last_context, decoded) or {}),
        calibration=None if ratio is None else (ratio, samples),
    )


def session_row(values: Sequence[Any], decoded: bool = False) -> Session:
    """A detached `Session` holding the `SESSION_FIELDS` of a row."""
    fields = {field.key: value for field, value in zip(SESSION_FIELDS, values, strict=False)}
    for name in _JSON_SESSION_FIELDS:
        fields[name] = _json(fields[name], decoded)
    fields["updated_at"] = timestamp(fields["updated_at"])
    return Session(**fields)


def session_and_calibrations(
    rows: Sequence[Sequence[Any]], session_id: str, decoded: bool = False
) -> tuple[Session, dict[str, CalibrationValue]]:
    """`CONTEXT_SESSION` rows: the session, and the tenant's calibrations by family."""
    if not rows:
        raise SessionNotFound(session_id)
    width = len(SESSION_FIELDS)
    return session_row(rows[0][:width], decoded), calibrations(
        row[width:] for row in rows if row[width] is not None
    )


def calibrations(rows: Any) -> dict[str, CalibrationValue]:
    return {
        family: CalibrationValue(family=family, ratio=ratio, samples=samples)
        for family, ratio, samples in rows
    }


def engine_message(row: Sequence[Any], decoded: bool = False) -> EngineMessage:
    """A message for the engine from its `MESSAGE_FIELDS` values: a driver's row, or the
    attributes of a stored `Message` (`stored_message`)."""
    message_id, seq, role, content, tokens, name, tool_calls, tool_call_id, meta = row
    content, tool_calls = _json(content, decoded), _json(tool_calls, decoded)
    meta = _json(meta, decoded)
    return EngineMessage(
        id=message_id,
        seq=seq,
        role=role,
        content=content,
        tokens=tokens,
        name=name,
        tool_calls=tool_calls,
        tool_call_id=tool_call_id,
        metadata=dict(meta or {}),
    )


def stored_message(message: Message) -> EngineMessage:
    return engine_message([getattr(message, f.key) for f in MESSAGE_FIELDS], True)


async def context_version(
    connection: AsyncConnection, tenant: str, session_id: str, family: str
) -> ContextVersion | None:
    """`CONTEXT_VERSION` through SQLAlchemy (the engine path of
    app/repositories/context_version.py)."""
    dialect = connection.dialect.name
    params = {"tenant": tenant, "session_id": session_id, "family": family}
    result = await connection.exec_driver_sql(
        CONTEXT_VERSION.sql(dialect), CONTEXT_VERSION.args(dialect, params)
    )
    row = result.one_or_none()
    return None if row is None else context_version_row(row, json_decoded(connection))


class ContextRepository:
    def __init__(self, db: AsyncSession) -> None:
        self.db = db

    async def _rows(self, read: DriverSQL, params: dict[str, Any]) -> tuple[Sequence[Any], bool]:
        """The rows of `read`, and whether their JSON is decoded (`json_decoded`)."""
        connection = await self.db.connection()
        dialect = connection.dialect.name
        result = await connection.exec_driver_sql(read.sql(dialect), read.args(dialect, params))
        return result.all(), json_decoded(connection)

    async def session_for_context(
        self, tenant: str, session_id: str
    ) -> tuple[Session, dict[str, CalibrationValue]]:
        """The session row and the tenant's calibrations by family, in one round trip."""
        params = {"tenant": tenant, "session_id": session_id}
        rows, decoded = await self._rows(CONTEXT_SESSION, params)
        return session_and_calibrations(rows, session_id, decoded)

    async def messages_after(self, session_pk: int, after_seq: int) -> list[EngineMessage]:
        params = {"pk": session_pk, "after_seq": after_seq}
        rows, decoded = await self._rows(MESSAGES_AFTER, params)
        return [engine_message(row, decoded) for row in rows]

    async def covered(self, session_pk: int, after_seq: int, through_seq: int) -> list[Covered]:
        """(id, seq, tokens) of the messages with after_seq < seq ≤ through_seq."""
        params = {"pk": session_pk, "after_seq": after_seq, "through": through_seq}
        rows, _ = await self._rows(COVERED, params)
        return [Covered(*row) for row in rows]

    async def user_messages_page(
        self, session_pk: int, *, after_seq: int, through_seq: int, limit: int = PINNED_PAGE
    ) -> list[EngineMessage]:
        """Up to `limit` user messages with after_seq < seq ≤ through_seq, in seq order."""
        params = {"pk": session_pk, "after_seq": after_seq, "through": through_seq, "limit": limit}
        rows, decoded = await self._rows(USER_MESSAGES_PAGE, params)
        return [engine_message(row, decoded) for row in rows]

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
