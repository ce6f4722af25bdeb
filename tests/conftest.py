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
from collections.abc import AsyncIterator, Iterator
from contextlib import AsyncExitStack
from pathlib import Path
from typing import Any

import httpx
import pytest
from fastapi import FastAPI
from hypothesis import settings as hypothesis_settings

from app.core.db import upgrade_database
from app.core.settings import Settings
from app.main import create_app
from tests.support.apps import MakeClient, make_settings
from tests.support.databases import migrated_postgres_database, truncate
from tests.support.recording_summarizer import RecordingSummarizer

# CI explores the same examples every run (a red build is then reproducible locally with
# HYPOTHESIS_PROFILE=ci); laptops keep hypothesis' random exploration.
hypothesis_settings.register_profile("ci", derandomize=True, print_blob=True)
hypothesis_settings.load_profile(
    os.environ.get("HYPOTHESIS_PROFILE", "ci" if os.environ.get("CI") else "default")
)


@pytest.fixture(scope="session")
def sqlite_template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("template") / "template.db"
    upgrade_database(f"sqlite:///{path}")
    return path


@pytest.fixture(scope="session")
def postgres_database() -> Iterator[str]:
    yield from migrated_postgres_database(f"foldwise_test_{os.getpid()}")


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
    asyncio.run(truncate(url))
    return url


@pytest.fixture
def settings(db_url: str) -> Settings:
    return make_settings(db_url)


@pytest.fixture
def recorder() -> RecordingSummarizer:
    return RecordingSummarizer()


@pytest.fixture
def app(settings: Settings, request: pytest.FixtureRequest) -> FastAPI:
    """The app on `settings`; a test that asks for `recorder` gets one whose folds call it."""
    if "recorder" in request.fixturenames:
        recorder: RecordingSummarizer = request.getfixturevalue("recorder")
        return create_app(settings, summarizer_factory=recorder.factory)
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
