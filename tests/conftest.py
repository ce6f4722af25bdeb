"""Shared fixtures: a migrated database per test (SQLite and PostgreSQL), apps and clients.

SQLite: migrated once into a template file, copied per test (a copy costs ~1 ms, a
migration ~100 ms). PostgreSQL: one fresh database per test run, named after the process
id so concurrent runs on one server never meet, migrated with Alembic, its tables
truncated before every test and the database dropped at the end.
"""

from __future__ import annotations

import asyncio
import os
import shutil
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from contextlib import AsyncExitStack
from pathlib import Path
from typing import Any

import asyncpg
import httpx
import pytest
from fastapi import FastAPI
from hypothesis import settings as hypothesis_settings

from app.core.db import normalize_database_url, upgrade_database
from app.core.settings import Settings
from app.main import create_app

DEFAULT_PG_URL = "postgresql://postgres@127.0.0.1:5432/test"
TABLES = ("messages", "summaries", "summary_cache", "calibrations", "sessions")

MakeClient = Callable[..., Awaitable[httpx.AsyncClient]]

# CI explores the same examples every run (a red build is then reproducible locally with
# HYPOTHESIS_PROFILE=ci); laptops keep hypothesis' random exploration.
hypothesis_settings.register_profile("ci", derandomize=True, print_blob=True)
hypothesis_settings.load_profile(
    os.environ.get("HYPOTHESIS_PROFILE", "ci" if os.environ.get("CI") else "default")
)


def postgres_admin_url() -> str:
    return os.environ.get("FOLDWISE_TEST_POSTGRES_URL", DEFAULT_PG_URL)


def _asyncpg_dsn(url: str, database: str | None = None) -> str:
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
    connection = await asyncpg.connect(_asyncpg_dsn(postgres_admin_url()), timeout=5)
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


@pytest.fixture(scope="session")
def sqlite_template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("template") / "template.db"
    upgrade_database(f"sqlite:///{path}")
    return path


def migrated_postgres_database(name: str) -> Iterator[str]:
    """A migrated PostgreSQL database `name` for the `yield` of a fixture, dropped after."""
    url = create_postgres_database(name)
    try:
        upgrade_database(url)
        yield url
    finally:
        drop_postgres_database(name)


@pytest.fixture(scope="session")
def postgres_database() -> Iterator[str]:
    yield from migrated_postgres_database(f"foldwise_test_{os.getpid()}")


async def _truncate(url: str) -> None:
    connection = await asyncpg.connect(_asyncpg_dsn(url), timeout=5)
    try:
        await connection.execute(f"TRUNCATE {', '.join(TABLES)} RESTART IDENTITY CASCADE")
    finally:
        await connection.close()


@pytest.fixture(
    params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)],
)
def db_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """A migrated, empty database URL (plain form, as a user would configure it)."""
    if request.param == "sqlite":
        template: Path = request.getfixturevalue("sqlite_template")
        path = tmp_path / "foldwise.db"
        shutil.copyfile(template, path)
        return f"sqlite:///{path}"
    url: str = request.getfixturevalue("postgres_database")
    asyncio.run(_truncate(url))
    return url


def make_settings(db_url: str, **overrides: Any) -> Settings:
    """Settings isolated from the developer's environment and .env file."""
    values: dict[str, Any] = {
        "database_url": db_url,
        "api_keys": "",
        "cors_origins": [],
        "anthropic_api_key": None,
        "anthropic_base_url": None,
        "models_file": None,
        # Folds as the budget needs them, waited for by the request that needs them: the
        # semantics most tests check; tests of folds ahead of need set their own.
        "fold_ahead": 1.0,
        "fold_hard_wait_s": 60.0,
    }
    values.update(overrides)
    return Settings(_env_file=None, **values)


@pytest.fixture
def settings(db_url: str) -> Settings:
    return make_settings(db_url)


@pytest.fixture
def app(settings: Settings) -> FastAPI:
    return create_app(settings)


@pytest.fixture
async def make_client(db_url: str) -> AsyncIterator[MakeClient]:
    """`await make_client(api_keys="t:k", ...)` → a client on a fresh app with those settings."""
    async with AsyncExitStack() as stack:

        async def factory(app: FastAPI | None = None, **overrides: Any) -> httpx.AsyncClient:
            application = app or create_app(make_settings(db_url, **overrides))
            await stack.enter_async_context(application.router.lifespan_context(application))
            transport = httpx.ASGITransport(app=application)
            return await stack.enter_async_context(
                httpx.AsyncClient(transport=transport, base_url="http://foldwise.test")
            )

        yield factory


@pytest.fixture
async def client(app: FastAPI, make_client: MakeClient) -> httpx.AsyncClient:
    return await make_client(app)
