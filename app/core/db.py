"""Database plumbing: URL normalisation, the async engine, the per-request unit of work,
and programmatic Alembic migrations.

One unit of work per request: `session_scope` commits when the request succeeds and rolls
back when anything raises; services and repositories never commit (they `flush()` when they
need generated values).
"""

from __future__ import annotations

import asyncio
import contextlib
import sys
import weakref
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from sqlalchemy import event, make_url
from sqlalchemy.engine import URL
from sqlalchemy.ext.asyncio import (
    AsyncConnection,
    AsyncEngine,
    AsyncSession,
    async_sessionmaker,
    create_async_engine,
)

# SQLite: a writer waits up to 5 s for the lock instead of failing at once with
# "database is locked" (several server processes may share one file).
SQLITE_BUSY_TIMEOUT_MS = 5000
# PostgreSQL: 5 connections per process plus 10 overflow serve a replica's ~15 concurrent
# requests; scale out with more replicas rather than larger pools.
PG_POOL_SIZE = 5
PG_MAX_OVERFLOW = 10

_ASYNC_DRIVERS = {"sqlite": "sqlite+aiosqlite", "postgresql": "postgresql+asyncpg"}


def _find_alembic_dir() -> Path:
    """The migration scripts: next to the source tree, else in the working directory
    (an installed wheel in a container whose WORKDIR holds the project)."""
    beside_source = Path(__file__).resolve().parents[2] / "alembic"
    # env.py distinguishes our scripts from the `alembic` package next to an installed app.
    return beside_source if (beside_source / "env.py").is_file() else Path.cwd() / "alembic"


ALEMBIC_DIR = _find_alembic_dir()


def normalize_database_url(raw: str) -> URL:
    """Map a plain SQLAlchemy URL to its async driver; explicit async drivers pass through.

    `sqlite:///x.db` → `sqlite+aiosqlite:///x.db`; `postgres://` and `postgresql://` (or
    `postgresql+psycopg2://`) → `postgresql+asyncpg://`.
    """
    text = raw.strip()
    if text.startswith("postgres://"):
        text = "postgresql://" + text[len("postgres://") :]
    url = make_url(text)
    backend = url.get_backend_name()
    if backend not in _ASYNC_DRIVERS:
        raise ValueError(f"unsupported database {backend!r}: use sqlite:// or postgresql://")
    if backend == "sqlite" and url.drivername == "sqlite+aiosqlite":
        return url
    if backend == "postgresql" and url.drivername == "postgresql+asyncpg":
        return url
    return url.set(drivername=_ASYNC_DRIVERS[backend])


def _on_sqlite_connect(dbapi_connection: Any, _record: Any) -> None:
    # Take transaction control away from the sqlite3 module, which only emits BEGIN before
    # INSERT/UPDATE/DELETE: reads would run outside the transaction and a SAVEPOINT would
    # start (and its RELEASE commit) a transaction of its own. `_on_sqlite_begin` begins.
    dbapi_connection.isolation_level = None
    cursor = dbapi_connection.cursor()
    # WAL lets readers proceed while one writer commits; foreign keys are off by default.
    cursor.execute("PRAGMA journal_mode=WAL")
    cursor.execute("PRAGMA foreign_keys=ON")
    cursor.execute(f"PRAGMA busy_timeout={SQLITE_BUSY_TIMEOUT_MS}")
    cursor.execute("PRAGMA synchronous=NORMAL")
    cursor.close()


# Execution option marking a unit of work that only reads (see `read_scope`).
READ_ONLY = "foldwise_read_only"


# Execution option of a connection that runs single statements outside any transaction
# (see `single_statements`).
NO_BEGIN = "foldwise_no_begin"


def _on_sqlite_begin(connection: Any) -> None:
    # IMMEDIATE takes the write lock up front (waiting up to busy_timeout). A deferred
    # transaction that reads and then writes fails at once with SQLITE_BUSY when another
    # writer committed in between; SQLite has one writer anyway, so queueing costs little.
    # Read-only units take a deferred BEGIN: in WAL mode they read a snapshot without
    # waiting for, or blocking, the writer — the hot GET …/context path is one of them.
    options = connection.get_execution_options()
    if options.get(NO_BEGIN, False):
        return
    connection.exec_driver_sql("BEGIN" if options.get(READ_ONLY, False) else "BEGIN IMMEDIATE")


def create_engine(database_url: str) -> AsyncEngine:
    """The async engine for `database_url` (plain or async-driver URL)."""
    url = normalize_database_url(database_url)
    # Parameters are message contents (and whatever secrets they hold): never in a log line
    # or an error message, at any log level.
    if url.get_backend_name() == "sqlite":
        engine = create_async_engine(
            url, connect_args={"timeout": SQLITE_BUSY_TIMEOUT_MS / 1000}, hide_parameters=True
        )
        event.listen(engine.sync_engine, "connect", _on_sqlite_connect)
        event.listen(engine.sync_engine, "begin", _on_sqlite_begin)
        return engine
    # No pre-ping: it costs a round trip per checkout (~0.1 ms of a 0.9 ms cached GET
    # context). A dropped connection fails its first statement instead, answered with a 503
    # (app/main.py `_connection_lost`), and SQLAlchemy then discards the stale connections.
    # Parameters (message contents, secrets) are never part of a logged statement.
    return create_async_engine(
        url, pool_size=PG_POOL_SIZE, max_overflow=PG_MAX_OVERFLOW, hide_parameters=True
    )


@asynccontextmanager
async def read_scope(
    factory: async_sessionmaker[AsyncSession], *, repeatable: bool = False
) -> AsyncIterator[AsyncSession]:
    """A unit of work that only reads: one consistent snapshot, never the write lock.

    SQLite's deferred BEGIN holds one snapshot for the whole unit; PostgreSQL's default
    (READ COMMITTED) gives each statement its own, so a unit whose statements must agree
    (`repeatable`: an export's pages) asks for REPEATABLE READ there.
    """
    options: dict[str, Any] = {READ_ONLY: True}
    if repeatable and factory.kw["bind"].dialect.name == "postgresql":
        options["isolation_level"] = "REPEATABLE READ"
    async with factory() as session:
        await session.connection(execution_options=options)
        async with _committed(session):  # the commit ends the snapshot, keeping rows loaded
            yield session


@asynccontextmanager
async def single_statements(engine: AsyncEngine) -> AsyncIterator[AsyncConnection]:
    """A connection whose statements each run on their own, with no BEGIN/COMMIT round trips:
    for a hot path that needs exactly one SELECT (a single statement reads one consistent
    snapshot on both databases). No ORM session, no transaction: the fewest round trips."""
    async with engine.connect() as connection:
        if engine.dialect.name == "sqlite":
            await connection.execution_options(**{NO_BEGIN: True})
        else:
            await connection.execution_options(isolation_level="AUTOCOMMIT")
        yield connection


def create_sessionmaker(engine: AsyncEngine) -> async_sessionmaker[AsyncSession]:
    return async_sessionmaker(engine, expire_on_commit=False, autoflush=False)


class WriteGate:
    """One SQLite write transaction at a time per process, waiting in line on the event loop.

    A write transaction takes SQLite's database lock at its first statement (BEGIN
    IMMEDIATE). Several of one process's connections asking at once wait in SQLite's busy
    handler, which sleeps in growing steps (up to 100 ms each) and lets a newcomer overtake:
    under load, 8 concurrent appends waited seconds. Queued here instead, each waits only for
    the ones before it. Re-entrant within a task (a unit of work opened inside another one
    must not wait for itself); other processes are still arbitrated by SQLite's busy timeout.
    """

    def __init__(self) -> None:
        self._lock = asyncio.Lock()
        self._owner: asyncio.Task[Any] | None = None

    @asynccontextmanager
    async def held(self) -> AsyncIterator[None]:
        task = asyncio.current_task()
        if task is not None and task is self._owner:
            yield
            return
        async with self._lock:
            self._owner = task
            try:
                yield
            finally:
                self._owner = None


_GATES: weakref.WeakKeyDictionary[Any, WriteGate] = weakref.WeakKeyDictionary()


def _write_gate(factory: async_sessionmaker[AsyncSession]) -> WriteGate | None:
    """The gate of the SQLite engine `factory` binds to (None for PostgreSQL: row locks)."""
    engine = factory.kw.get("bind")
    if engine is None or engine.dialect.name != "sqlite":
        return None
    gate = _GATES.get(engine.sync_engine)
    if gate is None:
        gate = _GATES[engine.sync_engine] = WriteGate()
    return gate


@asynccontextmanager
async def session_scope(factory: async_sessionmaker[AsyncSession]) -> AsyncIterator[AsyncSession]:
    """One unit of work: commit on success, roll back on any error."""
    gate = _write_gate(factory)
    held = gate.held() if gate else contextlib.nullcontext()
    async with held, factory() as session, _committed(session):
        yield session


@asynccontextmanager
async def _committed(session: AsyncSession) -> AsyncIterator[None]:
    """Commit on success, roll back on any error (a cancellation included)."""
    try:
        yield
    except BaseException:
        await session.rollback()
        raise
    else:
        await session.commit()


def alembic_config(database_url: str) -> Any:
    """An Alembic Config pointing at this project's scripts and `database_url`."""
    from alembic.config import Config

    ini = ALEMBIC_DIR.parent / "alembic.ini"
    # stdout is passed explicitly: Config's default is the sys.stdout of import time.
    config = Config(str(ini) if ini.is_file() else None, stdout=sys.stdout)
    config.set_main_option("script_location", str(ALEMBIC_DIR))
    # env.py reads this attribute first, so the URL never has to round-trip through the
    # ini file's %-interpolation (passwords may contain '%').
    config.attributes["database_url"] = database_url
    return config


def upgrade_database(database_url: str, revision: str = "head") -> None:
    """Apply migrations up to `revision` (blocking; call from sync code or a thread)."""
    from alembic import command

    command.upgrade(alembic_config(database_url), revision)
