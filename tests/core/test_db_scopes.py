"""SQLite units of work: writers queue on the write lock, readers never wait for it."""

from __future__ import annotations

import asyncio
import sqlite3
from pathlib import Path

import pytest
from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from app.core.db import create_engine, create_sessionmaker, read_scope, session_scope


@pytest.fixture
def db_file(tmp_path: Path) -> Path:
    path = tmp_path / "scopes.db"
    with sqlite3.connect(path) as connection:
        connection.execute("PRAGMA journal_mode=WAL")
        connection.execute("CREATE TABLE t (x INTEGER)")
        connection.execute("INSERT INTO t VALUES (1)")
    return path


async def read_value(factory: async_sessionmaker[AsyncSession]) -> int | None:
    async with read_scope(factory) as db:
        value: int | None = (await db.execute(text("SELECT x FROM t"))).scalar()
        return value


async def test_read_scope_does_not_wait_for_a_writer(db_file: Path) -> None:
    engine = create_engine(f"sqlite:///{db_file}")
    factory = create_sessionmaker(engine)
    writer = sqlite3.connect(db_file, isolation_level=None)
    writer.execute("BEGIN IMMEDIATE")  # another process holds the write lock
    writer.execute("UPDATE t SET x = 2")  # not committed: readers see the old snapshot
    try:
        # A write unit would queue up to the 5 s busy timeout here; the read answers at once.
        assert await asyncio.wait_for(read_value(factory), timeout=2) == 1
    finally:
        writer.execute("ROLLBACK")
        writer.close()
        await engine.dispose()


async def test_write_scope_commits_and_read_scope_sees_it(db_file: Path) -> None:
    engine = create_engine(f"sqlite:///{db_file}")
    factory = create_sessionmaker(engine)
    try:
        async with session_scope(factory) as db:
            await db.execute(text("UPDATE t SET x = 3"))
        assert await read_value(factory) == 3
    finally:
        await engine.dispose()


async def test_writers_of_one_process_queue_in_order_and_a_nested_unit_does_not_wait(
    db_file: Path,
) -> None:
    """The write gate: one SQLite write unit at a time per process, first come first served
    (no busy-handler sleeps), re-entrant within a task."""
    engine = create_engine(f"sqlite:///{db_file}")
    factory = create_sessionmaker(engine)
    order: list[str] = []
    inside = 0

    async def write(name: str, hold: float) -> None:
        nonlocal inside
        async with session_scope(factory) as db:
            inside += 1
            assert inside == 1, "two write units of one process at once"
            order.append(name)
            await db.execute(text("UPDATE t SET x = x + 1"))
            await asyncio.sleep(hold)
            inside -= 1

    async def nested() -> None:
        # The second unit opens inside the first: it would deadlock without re-entry.
        async with session_scope(factory), session_scope(factory) as inner:
            order.append("nested")
            await inner.execute(text("SELECT x FROM t"))

    try:
        await asyncio.wait_for(
            asyncio.gather(*(write(f"w{i}", 0.02) for i in range(8)), nested()), timeout=10
        )
        assert order == [f"w{i}" for i in range(8)] + ["nested"]
        assert await read_value(factory) == 9
    finally:
        await engine.dispose()
