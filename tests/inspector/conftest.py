"""Browser tests of the Inspector: Debian's Chromium driven headless by Playwright, against a
real `foldwise serve` on a free port, on SQLite and PostgreSQL, with keys for two tenants.

The system browser only (`/usr/bin/chromium`, or FOLDWISE_TEST_CHROMIUM): nothing is
downloaded. Without it the tests skip on a laptop and fail in CI.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import httpx
import pytest

from app.inspector.demo import seed_demo
from tests.support.databases import create_postgres_database, drop_postgres_database
from tests.support.servers import Server

CHROMIUM = os.environ.get("FOLDWISE_TEST_CHROMIUM", "/usr/bin/chromium")
KEY_A = "inspector-key-alpha"
KEY_B = "inspector-key-beta"
DEMO = "demo-agent"
SECRET = "beta-secret"  # tenant beta's session: alpha must never reach it


def browser_missing(reason: str) -> None:
    message = f"Chromium unavailable ({CHROMIUM}): {reason}"
    if os.environ.get("CI"):
        pytest.fail(message)
    pytest.skip(message)


# Module scope: Playwright's sync API runs an event loop on the main thread while it is
# started, which the async tests of the other modules must not find.
@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    if not Path(CHROMIUM).exists():
        browser_missing("not installed (apt-get install chromium)")
    from playwright.sync_api import Error, sync_playwright

    with sync_playwright() as playwright:
        try:
            launched = playwright.chromium.launch(executable_path=CHROMIUM, headless=True)
        except Error as exc:
            browser_missing(str(exc))
        yield launched
        launched.close()


OTHERS = ("support-chat-7", "triage-bot")  # more of alpha's sessions, for the list


def seed(base_url: str) -> None:
    seed_demo(base_url, KEY_A, DEMO)
    with httpx.Client(
        base_url=base_url, headers={"Authorization": f"Bearer {KEY_A}"}, timeout=30
    ) as alpha:
        for n, other in enumerate(OTHERS, start=1):
            alpha.post("/sessions", json={"id": other, "model": "gpt-4o"}).raise_for_status()
            turns = [
                {"role": "user" if i % 2 == 0 else "assistant", "content": f"turn {i} " * 20 * n}
                for i in range(4 * n)
            ]
            alpha.post(f"/sessions/{other}/messages", json={"messages": turns}).raise_for_status()
    with httpx.Client(
        base_url=base_url, headers={"Authorization": f"Bearer {KEY_B}"}, timeout=30
    ) as beta:
        beta.post("/sessions", json={"id": SECRET, "system_prompt": "beta only"}).raise_for_status()
        beta.post(
            f"/sessions/{SECRET}/messages",
            json={"messages": [{"role": "user", "content": "tenant beta's private task"}]},
        ).raise_for_status()


def off_loop(call: Callable[..., Any], *args: Any) -> Any:
    """Playwright's sync API runs an event loop on this thread: asyncio.run() must not."""
    with ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(call, *args).result()


@pytest.fixture(
    scope="module", params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)]
)
def server(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Server]:
    workdir = tmp_path_factory.mktemp("inspector")
    database = f"foldwise_inspector_{os.getpid()}"
    if request.param == "sqlite":
        url = f"sqlite:///{workdir / 'foldwise.db'}"
    else:
        url = off_loop(create_postgres_database, database)
    served = Server(url, workdir, FOLDWISE_API_KEYS=f"alpha:{KEY_A},beta:{KEY_B}").start()
    try:
        seed(served.base_url)
        yield served
    finally:
        served.stop()
        if request.param == "postgres":
            off_loop(drop_postgres_database, database)
