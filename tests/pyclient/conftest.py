"""Real `foldwise serve` processes for the Python client's tests: one per database
(SQLite, PostgreSQL) for the whole package, shared by tests that each use fresh session ids.
`make_fw` / `fw` run a test once with `Foldwise` and once with `AsyncFoldwise`."""

from __future__ import annotations

import asyncio
import inspect
import os
import uuid
from collections.abc import AsyncIterator, Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from foldwise_client import AsyncFoldwise, Foldwise

from tests.pyclient.fake_providers import FakeProviders
from tests.support.databases import create_postgres_database, drop_postgres_database
from tests.support.servers import Server


@pytest.fixture(
    scope="package", params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)]
)
def server(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Server]:
    workdir: Path = tmp_path_factory.mktemp(f"pyclient-{request.param}")
    name = f"foldwise_pyclient_{os.getpid()}"
    if request.param == "sqlite":
        url = f"sqlite:///{workdir / 'foldwise.db'}"
    else:
        url = create_postgres_database(name)
    started = Server(url, workdir, FOLDWISE_STRATEGY="rule").start()
    try:
        yield started
    finally:
        started.stop()
        if request.param == "postgres":
            drop_postgres_database(name)


def new_id(prefix: str = "s") -> str:
    return f"{prefix}-{uuid.uuid4().hex[:12]}"


class AsyncView:
    """Calls a client's methods with `await`, whether the client is sync or async: the sync
    client's calls run in a worker thread (so fault-proxy threads and the loop stay free)."""

    def __init__(self, client: Foldwise | AsyncFoldwise) -> None:
        self.client = client

    def __getattr__(self, name: str) -> Callable[..., Any]:
        method = getattr(self.client, name)

        async def call(*args: Any, **kwargs: Any) -> Any:
            if isinstance(self.client, AsyncFoldwise):
                value = method(*args, **kwargs)
                if inspect.isasyncgen(value):
                    return [item async for item in value]
                return await value
            value = await asyncio.to_thread(method, *args, **kwargs)
            return list(value) if inspect.isgenerator(value) else value

        return call


@pytest.fixture(params=["sync", "async"])
async def make_fw(request: pytest.FixtureRequest) -> AsyncIterator[Callable[..., AsyncView]]:
    """`make_fw(base_url, **options)` → an AsyncView over a Foldwise or AsyncFoldwise."""
    opened: list[Foldwise | AsyncFoldwise] = []

    def make(base_url: str, **options: Any) -> AsyncView:
        client: Foldwise | AsyncFoldwise = (
            Foldwise(base_url, **options)
            if request.param == "sync"
            else AsyncFoldwise(base_url, **options)
        )
        opened.append(client)
        return AsyncView(client)

    yield make
    for client in opened:
        if isinstance(client, AsyncFoldwise):
            await client.close()
        else:
            client.close()


@pytest.fixture
def fw(server: Server, make_fw: Callable[..., AsyncView]) -> AsyncView:
    return make_fw(server.base_url)


@pytest.fixture(scope="module")
def providers() -> Iterator[FakeProviders]:
    """Fake provider APIs on loopback (tests/pyclient/fake_providers.py), one per module."""
    started = FakeProviders().start()
    try:
        yield started
    finally:
        started.stop()
