"""The reads of an uncached GET …/context, through the driver itself.

The same three reads as `ContextRepository` (the session row with the tenant's calibrations,
the messages after a seq, a page of user messages: the statements of
app/repositories/context.py, compiled once per dialect) in one read-only snapshot, on the
connections of the context-version reader (app/repositories/context_version.py): on SQLite
its `sqlite3` connection, on the event loop, between `BEGIN` and `COMMIT` with no await in
between (a snapshot no other coroutine can touch); on PostgreSQL one statement on one of its asyncpg
connections (a statement sees one snapshot: no transaction, one round trip). SQLAlchemy's
statement, execution and result layers cost more than the reads themselves here, and on
SQLite each of its statements is several hops to aiosqlite's thread.

Rows are decoded by context.py's decoders, as on the engine's path
(`tests/repositories/test_context_rows.py` holds both equal to what the ORM reads). SQLite reads on
the loop only what `MAX_LOOP_ROWS` and `MAX_LOOP_BYTES` bound; a longer read goes through
the app's engine (aiosqlite's thread).
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from typing import Any, Protocol

from app.core.errors import SessionNotFound
from app.engine.calibration import Calibration as CalibrationValue
from app.engine.types import Message as EngineMessage
from app.models import Session
from app.repositories.context import (
    CONTEXT_IN_ONE_STATEMENT,
    CONTEXT_SESSION,
    MESSAGES_AFTER,
    PINNED_PAGE,
    SESSION_FIELDS,
    USER_MESSAGES_PAGE,
    calibrations,
    engine_message,
    session_and_calibrations,
    session_row,
)
from app.repositories.context_version import (
    ContextVersionReader,
    PostgresContextVersionReader,
    SqliteContextVersionReader,
)
from app.repositories.driver_sql import DriverSQL

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


# Opens one read transaction (a snapshot of the session's rows) on the driver's connection;
# called with the seq after which messages will be read (0, or the newest of a context served
# before: a PostgreSQL snapshot reads only those). Explained contexts are read by the engine.
DriverSnapshot = Callable[[int], AbstractAsyncContextManager[DriverReads]]


class _SqliteReads:
    def __init__(self, connection: Any, decoded: DecodedMessages) -> None:
        self.connection = connection
        self.decoded = decoded
        self.bytes_left = MAX_LOOP_BYTES

    def _messages(self, read: DriverSQL, params: dict[str, Any]) -> list[EngineMessage]:
        rows = []
        for row in self.connection.execute(read.sql("sqlite"), read.args("sqlite", params)):
            self.bytes_left -= sum(len(value) for value in row if isinstance(value, str))
            if self.bytes_left < 0:
                raise TooLongForTheLoop
            rows.append(row)
        return [self.decoded(row) for row in rows]

    async def session_for_context(
        self, tenant: str, session_id: str
    ) -> tuple[Session, dict[str, CalibrationValue]]:
        params: dict[str, Any] = {"tenant": tenant, "session_id": session_id}
        sql, args = CONTEXT_SESSION.sql("sqlite"), CONTEXT_SESSION.args("sqlite", params)
        return session_and_calibrations(self.connection.execute(sql, args).fetchall(), session_id)

    async def messages_after(self, session_pk: int, after_seq: int) -> list[EngineMessage]:
        return self._messages(MESSAGES_AFTER, {"pk": session_pk, "after_seq": after_seq})

    async def user_messages_page(
        self, session_pk: int, *, after_seq: int, through_seq: int, limit: int = PINNED_PAGE
    ) -> list[EngineMessage]:
        params = {"pk": session_pk, "after_seq": after_seq, "through": through_seq, "limit": limit}
        return self._messages(USER_MESSAGES_PAGE, params)

    def takes(self, rows: int) -> bool:
        return rows <= MAX_LOOP_ROWS


class _PostgresReads:
    """Everything a context reads, fetched by `session_for_context` in one statement (one
    round trip instead of BEGIN, three SELECTs and COMMIT); the message reads that follow
    are answered from it."""

    def __init__(
        self, reader: PostgresContextVersionReader, after: int, decoded: DecodedMessages
    ) -> None:
        self.reader = reader
        self.after = after
        self.decoded = decoded
        self.fetched: dict[tuple[Any, ...], list[EngineMessage]] = {}

    async def session_for_context(
        self, tenant: str, session_id: str
    ) -> tuple[Session, dict[str, CalibrationValue]]:
        read = CONTEXT_IN_ONE_STATEMENT
        params: dict[str, Any] = {"tenant": tenant, "session_id": session_id}
        params.update(limit=PINNED_PAGE, after_seq=self.after)
        async with self.reader.connection() as connection:
            found = await connection.fetchrow(
                read.sql("postgresql"), *read.args("postgresql", params)
            )
        if found is None:
            raise SessionNotFound(session_id)
        width = len(SESSION_FIELDS)
        row = session_row(tuple(found[:width]))
        of_tenant, live, page = found[width:]
        floor = max(row.summary_through_seq, row.cleared_through_seq)
        self.fetched = {
            ("after", row.pk, max(floor, self.after)): [self.decoded(m) for m in live],
            ("page", row.pk, row.cleared_through_seq, floor, PINNED_PAGE): [
                self.decoded(m) for m in page
            ],
        }
        return row, calibrations(of_tenant)

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
    reader: SqliteContextVersionReader, after: int, decoded: DecodedMessages
) -> AsyncIterator[DriverReads]:
    connection = reader.connection()
    connection.execute("BEGIN")
    try:
        yield _SqliteReads(connection, decoded)
    finally:
        connection.execute("COMMIT")


@asynccontextmanager
async def postgres_snapshot(
    reader: PostgresContextVersionReader, after: int, decoded: DecodedMessages
) -> AsyncIterator[DriverReads]:
    yield _PostgresReads(reader, after, decoded)


def driver_snapshot(reader: ContextVersionReader) -> DriverSnapshot | None:
    """Consistent reads of a context's rows on the context-version reader's own driver
    connections (sqlite3 or asyncpg, one transaction each), or None: read through SQLAlchemy."""
    decoded = DecodedMessages()
    if isinstance(reader, SqliteContextVersionReader):
        sqlite_reader = reader
        return lambda after: sqlite_snapshot(sqlite_reader, after, decoded)
    if isinstance(reader, PostgresContextVersionReader):
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
]
