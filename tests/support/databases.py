"""The test databases: a fresh PostgreSQL database per run (named after the process, so
concurrent runs on one server never meet), and what fails or skips when it is not there."""

from __future__ import annotations

import asyncio
import os
from collections.abc import Iterator

import asyncpg
import pytest

from app.core.db import normalize_database_url, upgrade_database

DEFAULT_PG_URL = "postgresql://postgres@127.0.0.1:5432/test"
TABLES = ("messages", "summaries", "summary_cache", "calibrations", "sessions")


def postgres_admin_url() -> str:
    return os.environ.get("FOLDWISE_TEST_POSTGRES_URL", DEFAULT_PG_URL)


def asyncpg_dsn(url: str, database: str | None = None) -> str:
    parsed = normalize_database_url(url)
    if database is not None:
        parsed = parsed.set(database=database)
    return parsed.set(drivername="postgresql").render_as_string(hide_password=False)


def postgres_unavailable(reason: str) -> None:
    """Fail in CI (PostgreSQL is part of the contract there), skip on a laptop without it."""
    message = f"PostgreSQL unreachable at {postgres_admin_url()}: {reason}"
    if os.environ.get("CI"):
        pytest.fail(message)
    pytest.skip(message)


async def _admin(sql: str) -> None:
    connection = await asyncpg.connect(asyncpg_dsn(postgres_admin_url()), timeout=5)
    try:
        await connection.execute(sql)
    finally:
        await connection.close()


def create_postgres_database(name: str) -> str:
    """CREATE DATABASE `name` on the test server; returns its URL. Skips/fails if down."""
    try:
        asyncio.run(_admin(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
        asyncio.run(_admin(f'CREATE DATABASE "{name}"'))
    except (OSError, asyncpg.PostgresError, TimeoutError) as exc:
        postgres_unavailable(str(exc))
    return (
        normalize_database_url(postgres_admin_url())
        .set(database=name)
        .render_as_string(hide_password=False)
    )


def drop_postgres_database(name: str) -> None:
    asyncio.run(_admin(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))


def migrated_postgres_database(name: str) -> Iterator[str]:
    """A migrated PostgreSQL database `name` for the `yield` of a fixture, dropped after."""
    url = create_postgres_database(name)
    try:
        upgrade_database(url)
        yield url
    finally:
        drop_postgres_database(name)


async def truncate(url: str) -> None:
    connection = await asyncpg.connect(asyncpg_dsn(url), timeout=5)
    try:
        await connection.execute(f"TRUNCATE {', '.join(TABLES)} RESTART IDENTITY CASCADE")
    finally:
        await connection.close()
