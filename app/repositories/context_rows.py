"""The reads of an uncached GET …/context, through the driver itself.

The same three reads as `ContextRepository` (the session row with the tenant's calibrations,
the messages after a seq, a page of user messages) in one read-only snapshot, on the
connections of the stamp reader (app/repositories/stamps.py): on SQLite its `sqlite3`
connection, on the event loop, between `BEGIN` and `COMMIT` with no await in between (a
snapshot no other coroutine can touch); on PostgreSQL one statement on one of its asyncpg
connections (a statement sees one snapshot: no transaction, one round trip). SQLAlchemy's
statement, execution and result layers cost more than the reads themselves here, and on
SQLite each of its statements is several hops to aiosqlite's thread.

Rows are decoded to exactly what the ORM reads (`tests/api/test_context_rows.py` holds the
two snapshots equal). SQLite reads on the loop only what `MAX_LOOP_ROWS` and
`MAX_LOOP_BYTES` bound; a longer read goes through the app's engine (aiosqlite's thread).
"""

from __future__ import annotations

import json
from collections import OrderedDict
from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from typing import Any, Protocol

from app.core.errors import SessionNotFound
from app.engine.calibration import Calibration as CalibrationValue
from app.engine.types import Message as EngineMessage
from app.models import Calibration, Message, Session
from app.repositories.context import PINNED_PAGE
from app.repositories.stamps import (
    PostgresStampReader,
    SqliteStampReader,
    StampReader,
    timestamp,
)

# What one SQLite snapshot may bring in on the event loop: rows (~1 µs of C and ~5 µs of
# decoding each) and stored bytes (JSON decoding runs at a few hundred MB/s): a few ms at most.
MAX_LOOP_ROWS = 400
MAX_LOOP_BYTES = 1 << 20
# Text of the rows whose decoded messages an app keeps (DecodedMessages); the rows and their
# decoded messages take a few times that in memory.
MAX_DECODED_BYTES = 8 << 20


class TooLongForTheLoop(Exception):
    """The SQLite snapshot would read more than the loop should: read through the engine."""


class NotInSnapshot(Exception):
    """A read the PostgreSQL statement did not bring (a later page of pinned-message
    candidates): the whole snapshot is read again through the engine, in one transaction."""


_SESSION_COLUMNS = (
    "pk",
    "external_id",
    "model",
    "system_prompt",
    "tools",
    "settings",
    "updated_at",
    "last_seq",
    "conversation_summary",
    "summary_through_id",
    "summary_through_seq",
    "summary_version",
    "summary_message_count",
    "summary_tokens",
    "summary_method",
    "cleared_through_seq",
    "live_removed",
    "last_context",
)
_JSON_COLUMNS = {"tools", "settings", "last_context"}
_MESSAGE_COLUMNS = "id, seq, role, content, token_count, name, tool_calls, tool_call_id, metadata"


def _session_sql(p: list[str]) -> str:
    columns = ", ".join(f"s.{c}" for c in _SESSION_COLUMNS)
    return (
        f"SELECT {columns}, c.family, c.ratio, c.samples FROM {Session.__tablename__} AS s "
        f"LEFT OUTER JOIN {Calibration.__tablename__} AS c ON c.tenant = s.tenant "
        f"WHERE s.tenant = {p[0]} AND s.external_id = {p[1]}"
    )


def _after_sql(p: list[str]) -> str:
    return (
        f"SELECT {_MESSAGE_COLUMNS} FROM {Message.__tablename__} "
        f"WHERE session_id = {p[0]} AND seq > {p[1]} ORDER BY seq"
    )


def _page_sql(p: list[str]) -> str:
    return (
        f"SELECT {_MESSAGE_COLUMNS} FROM {Message.__tablename__} "
        f"WHERE session_id = {p[0]} AND seq > {p[1]} AND seq <= {p[2]} AND role = 'user' "
        f"ORDER BY seq LIMIT {p[3]}"
    )


def _postgres_context_sql() -> str:
    """One statement, so one snapshot with no transaction around it: the session row, the
    tenant's calibrations, the messages after the floor (`summary_through_seq`; after $4 when
    that is later: the messages a context served before lacks) and the first page of user
    messages up to the floor (the pinned-message candidates), the last three as arrays of
    rows."""
    columns = ", ".join(f"s.{c}" for c in _SESSION_COLUMNS)
    message = f"ROW({', '.join(f'm.{c}' for c in _MESSAGE_COLUMNS.split(', '))})"
    floor = "GREATEST(s.summary_through_seq, s.cleared_through_seq)"
    messages = f"FROM {Message.__tablename__} AS m WHERE m.session_id = s.pk"
    return (
        f"SELECT {columns}, "
        f"ARRAY(SELECT ROW(c.family, c.ratio, c.samples) FROM {Calibration.__tablename__} AS c "
        "WHERE c.tenant = s.tenant), "
        f"ARRAY(SELECT {message} {messages} "
        f"AND m.seq > GREATEST({floor}, $4) ORDER BY m.seq), "
        f"ARRAY(SELECT {message} {messages} AND m.seq > s.cleared_through_seq "
        f"AND m.seq <= {floor} AND m.role = 'user' ORDER BY m.seq LIMIT $3) "
        f"FROM {Session.__tablename__} AS s WHERE s.tenant = $1 AND s.external_id = $2"
    )


_QMARKS = ["?"] * 4
SQLITE = (_session_sql(_QMARKS), _after_sql(_QMARKS), _page_sql(_QMARKS))
POSTGRES_CONTEXT = _postgres_context_sql()


def _json(value: Any) -> Any:
    return json.loads(value) if isinstance(value, str | bytes) else value


def session_row(values: tuple[Any, ...]) -> Session:
    """A detached `Session` holding the columns a context reads."""
    fields = dict(zip(_SESSION_COLUMNS, values, strict=False))
    for name in _JSON_COLUMNS:
        fields[name] = _json(fields[name])
    fields["updated_at"] = timestamp(fields["updated_at"])
    return Session(**fields)


def engine_message(row: tuple[Any, ...]) -> EngineMessage:
    message_id, seq, role, content, tokens, name, tool_calls, tool_call_id, meta = row
    return EngineMessage(
        id=message_id,
        seq=seq,
        role=role,
        content=_json(content),
        tokens=tokens,
        name=name,
        tool_calls=_json(tool_calls),
        tool_call_id=tool_call_id,
        metadata=dict(_json(meta) or {}),
    )


class DecodedMessages:
    """Engine messages by their whole row: a row read again (messages are immutable once
    appended, so every uncached context reads the same ones) is not decoded again. A row
    that differs in any column is another key, so a hit is exactly what decoding gives.
    Bounded by the rows' text, least recently used out; one per app."""

    def __init__(self, max_bytes: int = MAX_DECODED_BYTES) -> None:
        self.max_bytes = max_bytes
        self.size = 0
        self._messages: OrderedDict[tuple[Any, ...], tuple[EngineMessage, int]] = OrderedDict()

    def __call__(self, row: tuple[Any, ...]) -> EngineMessage:
        found = self._messages.get(row)
        if found is not None:
            self._messages.move_to_end(row)
            return found[0]
        message = engine_message(row)
        size = sum(len(value) for value in row if isinstance(value, str))
        if size <= self.max_bytes:
            self._messages[row] = (message, size)
            self.size += size
            while self.size > self.max_bytes:
                self.size -= self._messages.popitem(last=False)[1][1]
        return message


def _session_and_calibrations(
    rows: list[tuple[Any, ...]], session_id: str
) -> tuple[Session, dict[str, CalibrationValue]]:
    if not rows:
        raise SessionNotFound(session_id)
    width = len(_SESSION_COLUMNS)
    calibrations = {
        row[width]: CalibrationValue(
            family=row[width], ratio=row[width + 1], samples=row[width + 2]
        )
        for row in rows
        if row[width] is not None
    }
    return session_row(tuple(rows[0][:width])), calibrations


class ContextReads(Protocol):
    """`ContextRepository`'s reads of GET …/context (see the module docstring)."""

    async def session_for_context(
        self, tenant: str, session_id: str
    ) -> tuple[Session, dict[str, CalibrationValue]]: ...

    async def messages_after(self, session_pk: int, after_seq: int) -> list[EngineMessage]: ...

    async def user_messages_page(
        self, session_pk: int, *, after_seq: int, through_seq: int, limit: int = PINNED_PAGE
    ) -> list[EngineMessage]: ...


class DriverReads(ContextReads, Protocol):
    def takes(self, rows: int) -> bool:
        """Whether this snapshot may read `rows` more messages (else the engine's path)."""
        ...


# Called with the seq after which messages will be read (0, or the newest of a context served
# before: a PostgreSQL snapshot reads only those). Explained contexts are read by the ORM.
DriverSnapshot = Callable[[int], AbstractAsyncContextManager[DriverReads]]


class _SqliteReads:
    def __init__(self, connection: Any, decoded: DecodedMessages) -> None:
        self.connection = connection
        self.decoded = decoded
        self.bytes_left = MAX_LOOP_BYTES

    def _messages(self, sql: str, params: tuple[Any, ...]) -> list[EngineMessage]:
        rows = []
        for row in self.connection.execute(sql, params):
            self.bytes_left -= sum(len(value) for value in row if isinstance(value, str))
            if self.bytes_left < 0:
                raise TooLongForTheLoop
            rows.append(row)
        return [self.decoded(row) for row in rows]

    async def session_for_context(
        self, tenant: str, session_id: str
    ) -> tuple[Session, dict[str, CalibrationValue]]:
        rows = self.connection.execute(SQLITE[0], (tenant, session_id)).fetchall()
        return _session_and_calibrations(rows, session_id)

    async def messages_after(self, session_pk: int, after_seq: int) -> list[EngineMessage]:
        return self._messages(SQLITE[1], (session_pk, after_seq))

    async def user_messages_page(
        self, session_pk: int, *, after_seq: int, through_seq: int, limit: int = PINNED_PAGE
    ) -> list[EngineMessage]:
        return self._messages(SQLITE[2], (session_pk, after_seq, through_seq, limit))

    def takes(self, rows: int) -> bool:
        return rows <= MAX_LOOP_ROWS


class _PostgresReads:
    """Everything a context reads, fetched by `session_for_context` in one statement (one
    round trip instead of BEGIN, three SELECTs and COMMIT); the message reads that follow
    are answered from it."""

    def __init__(self, reader: PostgresStampReader, after: int, decoded: DecodedMessages) -> None:
        self.reader = reader
        self.after = after
        self.decoded = decoded
        self.fetched: dict[tuple[Any, ...], list[EngineMessage]] = {}

    async def session_for_context(
        self, tenant: str, session_id: str
    ) -> tuple[Session, dict[str, CalibrationValue]]:
        async with self.reader.connection() as connection:
            found = await connection.fetchrow(
                POSTGRES_CONTEXT, tenant, session_id, PINNED_PAGE, self.after
            )
        if found is None:
            raise SessionNotFound(session_id)
        width = len(_SESSION_COLUMNS)
        row = session_row(tuple(found[:width]))
        calibrations, live, page = found[width:]
        floor = max(row.summary_through_seq, row.cleared_through_seq)
        self.fetched = {
            ("after", row.pk, max(floor, self.after)): [self.decoded(m) for m in live],
            ("page", row.pk, row.cleared_through_seq, floor, PINNED_PAGE): [
                self.decoded(m) for m in page
            ],
        }
        return row, {
            family: CalibrationValue(family=family, ratio=ratio, samples=samples)
            for family, ratio, samples in calibrations
        }

    def _fetched(self, key: tuple[Any, ...]) -> list[EngineMessage]:
        if key not in self.fetched:
            raise NotInSnapshot
        return self.fetched[key]

    async def messages_after(self, session_pk: int, after_seq: int) -> list[EngineMessage]:
        return self._fetched(("after", session_pk, after_seq))

    async def user_messages_page(
        self, session_pk: int, *, after_seq: int, through_seq: int, limit: int = PINNED_PAGE
    ) -> list[EngineMessage]:
        return self._fetched(("page", session_pk, after_seq, through_seq, limit))

    def takes(self, rows: int) -> bool:
        return True


@asynccontextmanager
async def sqlite_snapshot(
    reader: SqliteStampReader, after: int, decoded: DecodedMessages
) -> AsyncIterator[DriverReads]:
    connection = reader.connection()
    connection.execute("BEGIN")
    try:
        yield _SqliteReads(connection, decoded)
    finally:
        connection.execute("COMMIT")


@asynccontextmanager
async def postgres_snapshot(
    reader: PostgresStampReader, after: int, decoded: DecodedMessages
) -> AsyncIterator[DriverReads]:
    yield _PostgresReads(reader, after, decoded)


def driver_snapshot(reader: StampReader) -> DriverSnapshot | None:
    """The driver snapshot on the stamp reader's connections, or None (the engine's path)."""
    decoded = DecodedMessages()
    if isinstance(reader, SqliteStampReader):
        sqlite_reader = reader
        return lambda after: sqlite_snapshot(sqlite_reader, after, decoded)
    if isinstance(reader, PostgresStampReader):
        postgres_reader = reader
        return lambda after: postgres_snapshot(postgres_reader, after, decoded)
    return None


__all__ = [
    "ContextReads",
    "DecodedMessages",
    "DriverReads",
    "DriverSnapshot",
    "NotInSnapshot",
    "TooLongForTheLoop",
    "driver_snapshot",
    "engine_message",
    "session_row",
]
