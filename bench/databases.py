"""Throw-away, migrated databases for one benchmark run: a SQLite file and a PostgreSQL
database named `foldwise_bench_<pid>` that this run creates and always drops."""

from __future__ import annotations

import asyncio
import contextlib
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path

from app.core.db import upgrade_database

# The server the benchmark may use; only the database it creates is ever touched.
PG_SERVER_URL = os.environ.get("FOLDWISE_BENCH_PG", "postgresql://postgres@127.0.0.1:5432")
# CREATE/DROP DATABASE must be issued from another database; `postgres` is the standard one.
PG_MAINTENANCE_DB = "postgres"


def bench_database_name() -> str:
    return f"foldwise_bench_{os.getpid()}"


async def _pg_admin(statement: str) -> None:
    import asyncpg  # type: ignore[import-untyped]

    connection = await asyncpg.connect(f"{PG_SERVER_URL}/{PG_MAINTENANCE_DB}", timeout=5)
    try:
        await connection.execute(statement)
    finally:
        await connection.close()


def postgres_available() -> str | None:
    """None when the server answers, else why not (the PostgreSQL cases are then skipped)."""
    try:
        asyncio.run(_pg_admin("SELECT 1"))
    except Exception as exc:  # any failure means "not available", reported in the doc
        return f"{type(exc).__name__}: {exc}"
    return None


@contextlib.contextmanager
def sqlite_database() -> Iterator[str]:
    with tempfile.TemporaryDirectory(prefix="foldwise-bench-") as directory:
        url = f"sqlite:///{Path(directory) / 'bench.db'}"
        upgrade_database(url)
        yield url


@contextlib.contextmanager
def postgres_database() -> Iterator[str]:
    name = bench_database_name()
    asyncio.run(_pg_admin(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
    asyncio.run(_pg_admin(f'CREATE DATABASE "{name}"'))
    try:
        url = f"{PG_SERVER_URL}/{name}"
        upgrade_database(url)
        yield url
    finally:
        asyncio.run(_pg_admin(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
