"""The context-version read of a cache hit, through the database driver itself.

A cached GET …/context is validated by one indexed statement (`context_version` in
app/repositories/context.py). Through SQLAlchemy that costs a pool checkout, an execution
context and result processing, and on SQLite two hops to aiosqlite's thread; together
several times the cost of the rest of a hit. The readers here run the same statement on a
connection of their own, each statement on its own (autocommit: one consistent snapshot of
committed rows, so another replica's change is seen by the next read):

- SQLite: a plain `sqlite3` connection used on the event loop. The statement is two unique
  index lookups (tens of µs), cheaper than any thread hop; `busy_timeout=0` means a read
  that would wait (WAL recovery) fails at once, and the caller then takes the full path.
- PostgreSQL: a few asyncpg connections of their own (each statement prepared once per
  connection by asyncpg's statement cache); a pool without asyncpg's reset round trip on
  release, since nothing here changes a connection's state.
- Any other engine (`:memory:` SQLite): SQLAlchemy Core on a bare connection.

Values are decoded by `context_version_row` on every path, to what the ORM reads (`UTCDateTime`,
JSON), so a stamp taken from the snapshot a context was assembled from compares equal to a
stamp read here.
"""

from __future__ import annotations

import asyncio
import sqlite3
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any, Protocol

from sqlalchemy.ext.asyncio import AsyncEngine

from app.core.db import single_statements
from app.core.errors import FoldwiseError
from app.repositories.context import (
    CONTEXT_VERSION,
    ContextVersion,
    context_version,
    context_version_row,
)

# Enough for the concurrent hits of one worker: a statement takes well under a millisecond.
PG_READERS = 4

# `CONTEXT_VERSION` in each driver's SQL.
SQLITE_STATE = CONTEXT_VERSION.sql("sqlite")
POSTGRES_STATE = CONTEXT_VERSION.sql("postgresql")


def _params(tenant: str, session_id: str, family: str) -> dict[str, str]:
    return {"tenant": tenant, "session_id": session_id, "family": family}


class ContextVersionReader(Protocol):
    async def read(self, tenant: str, session_id: str, family: str) -> ContextVersion | None: ...

    async def close(self) -> None: ...


class NoDatabase:
    """Before the lifespan opened the database nothing can be validated: every lookup misses."""

    async def read(self, tenant: str, session_id: str, family: str) -> ContextVersion | None:
        return None

    async def close(self) -> None:
        return None


class EngineContextVersionReader:
    """SQLAlchemy Core on a bare connection of the app's engine."""

    def __init__(self, engine: AsyncEngine) -> None:
        self.engine = engine

    async def read(self, tenant: str, session_id: str, family: str) -> ContextVersion | None:
        async with single_statements(self.engine) as connection:
            return await context_version(connection, tenant, session_id, family)

    async def close(self) -> None:
        return None


class SqliteContextVersionReader:
    """A `sqlite3` connection of its own, read on the event loop (see the module docstring)."""

    def __init__(self, path: str) -> None:
        self.path = path
        self._connection: sqlite3.Connection | None = None

    def _connect(self) -> sqlite3.Connection:
        connection = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False)
        connection.execute("PRAGMA busy_timeout=0")
        connection.execute("PRAGMA query_only=1")
        return connection

    def connection(self) -> sqlite3.Connection:
        """The reader's connection, opened on first use (use it without awaiting between
        statements: it belongs to whichever coroutine is running)."""
        if self._connection is None:
            self._connection = self._connect()
        return self._connection

    async def read(self, tenant: str, session_id: str, family: str) -> ContextVersion | None:
        connection = self.connection()
        try:
            args = CONTEXT_VERSION.args("sqlite", _params(tenant, session_id, family))
            row = connection.execute(SQLITE_STATE, args).fetchone()
        except sqlite3.Error:  # busy, or a broken connection: the next read opens a new one
            await self.close()
            raise
        return None if row is None else context_version_row(row)

    async def close(self) -> None:
        if self._connection is not None:
            self._connection.close()
            self._connection = None


class PostgresContextVersionReader:
    """Up to PG_READERS asyncpg connections of its own, opened on first use."""

    def __init__(self, connect_kwargs: dict[str, Any]) -> None:
        self.connect_kwargs = connect_kwargs
        self._idle: asyncio.LifoQueue[Any] = asyncio.LifoQueue()
        self._open = 0

    async def _acquire(self) -> Any:
        if self._idle.empty() and self._open < PG_READERS:
            import asyncpg

            self._open += 1
            try:
                return await asyncpg.connect(**self.connect_kwargs)
            except BaseException:
                self._open -= 1
                raise
        return await self._idle.get()

    @asynccontextmanager
    async def connection(self) -> AsyncIterator[Any]:
        """One of the reader's connections, for statements that leave it as they found it."""
        connection = await self._acquire()
        try:
            yield connection
        except FoldwiseError:  # an answer (404), not a failure: statements ended cleanly
            self._idle.put_nowait(connection)
            raise
        except BaseException:  # a failed or cancelled statement: the connection is suspect
            self._open -= 1
            connection.terminate()
            raise
        self._idle.put_nowait(connection)

    async def read(self, tenant: str, session_id: str, family: str) -> ContextVersion | None:
        async with self.connection() as connection:
            args = CONTEXT_VERSION.args("postgresql", _params(tenant, session_id, family))
            row = await connection.fetchrow(POSTGRES_STATE, *args)
        return None if row is None else context_version_row(row)

    async def close(self) -> None:
        while not self._idle.empty():
            connection = self._idle.get_nowait()
            self._open -= 1
            await connection.close()


_SQLALCHEMY_OPTIONS = {
    "async_creator_fn",
    "prepared_statement_cache_size",
    "prepared_statement_name_func",
}


def _asyncpg_kwargs(engine: AsyncEngine) -> dict[str, Any]:
    """`asyncpg.connect` arguments for the engine's URL, as SQLAlchemy's dialect builds them
    (its own options, such as the statement cache size, removed)."""
    args, kwargs = engine.dialect.create_connect_args(engine.url)
    assert not args
    return {key: value for key, value in kwargs.items() if key not in _SQLALCHEMY_OPTIONS}


def open_context_version_reader(engine: AsyncEngine) -> ContextVersionReader:
    """The fastest reader for the engine's database (nothing is connected yet)."""
    url = engine.url
    backend = url.get_backend_name()
    path = url.database
    if backend == "sqlite" and path and path != ":memory:" and "uri" not in url.query:
        return SqliteContextVersionReader(path)
    if backend == "postgresql":
        return PostgresContextVersionReader(_asyncpg_kwargs(engine))
    return EngineContextVersionReader(engine)


__all__ = [
    "POSTGRES_STATE",
    "SQLITE_STATE",
    "ContextVersionReader",
    "EngineContextVersionReader",
    "PostgresContextVersionReader",
    "SqliteContextVersionReader",
    "open_context_version_reader",
]
