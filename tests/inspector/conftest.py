"""Browser tests of the Inspector: Debian's Chromium driven headless by Playwright, against a
real `foldwise serve` on a free port, on SQLite and PostgreSQL, with keys for two tenants.

The system browser only (`/usr/bin/chromium`, or FOLDWISE_TEST_CHROMIUM): nothing is
downloaded. Without it the tests skip on a laptop and fail in CI.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import httpx
import pytest

from app.inspector.demo import seed_demo
from tests.inspector.long_session import seed_long_session
from tests.support.databases import create_postgres_database, drop_postgres_database
from tests.support.servers import Server

CHROMIUM = os.environ.get("FOLDWISE_TEST_CHROMIUM", "/usr/bin/chromium")
KEY_A = "inspector-key-alpha"
KEY_B = "inspector-key-beta"
DEMO = "demo-agent"
SECRET = "beta-secret"  # tenant beta's session: alpha must never reach it
LONG = "long-50k"
LONG_COUNT = 50_000
DATABASE_URLS: dict[str, str] = {}  # server base URL → its database
LONG_SEEDED: set[str] = set()  # servers holding LONG


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
FOLD_DUE = "fold-due"  # its next request folds: the default view is a dry run of that fold
BLOCKS = "blocks"  # every block shape, and contents too long to fit a line
SEEDED = (DEMO, *OTHERS, FOLD_DUE, BLOCKS)  # alpha's sessions every test finds
PNG = (  # a 1×1 PNG
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="
)
LONG_TEXTS = {  # each longer than a line can show
    "unbroken": "x" * 100_000,
    "base64": "QUJD" * 5_000,
    "url": "https://example.com/" + "segment/" * 400 + "?q=" + "v" * 500,
    "json": json.dumps(
        {f"key{i}": [i, {"deep": "value" * 5}] for i in range(300)}, separators=(",", ":")
    ),
    "lines": "\n".join(f"line {i}: " + "word " * 8 for i in range(300)),  # ~5,000 px opened
}


def block_messages() -> list[dict[str, Any]]:
    return [
        {
            "role": "user",
            "content": [
                {"type": "text", "text": "The screenshot and the spec."},
                {
                    "type": "image",
                    "source": {"type": "base64", "media_type": "image/png", "data": PNG},
                },
                {
                    "type": "document",
                    "title": "spec.pdf",
                    "source": {
                        "type": "base64",
                        "media_type": "application/pdf",
                        "data": "JVBERi0x" * 300,
                    },
                },
            ],
        },
        {
            "role": "assistant",
            "content": [
                {
                    "type": "thinking",
                    "thinking": "The spec says the total rounds once. " * 40,
                    "signature": "c2ln",
                },
                {"type": "text", "text": "Reading the README."},
                {
                    "type": "tool_use",
                    "id": "toolu_1",
                    "name": "read_file",
                    "input": {"path": "README.md"},
                },
            ],
        },
        {
            "role": "user",
            "content": [{"type": "tool_result", "tool_use_id": "toolu_1", "content": "# Cart"}],
        },
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": "call_9",
                    "type": "function",
                    "function": {
                        "name": "search_docs",
                        "arguments": '{"query": "rounding", "limit": 3}',
                    },
                }
            ],
        },
        {"role": "tool", "tool_call_id": "call_9", "content": "3 results"},
        {
            "role": "assistant",
            "content": [{"type": "redacted_thinking", "data": "ZW5jcnlwdGVk" * 20}],
        },
        *({"role": "user", "content": text, "name": name} for name, text in LONG_TEXTS.items()),
        {"role": "assistant", "content": [{"type": "widget", "payload": {"kind": "chart"}}]},
    ]


def seed_fold_due(alpha: httpx.Client, session_id: str) -> None:
    """A session whose next request folds: a 10,000-token budget (5% of 200,000, nothing
    reserved) under ~20,000 stored tokens."""
    settings = {"threshold": 0.05, "reserved_output_tokens": 0}
    created = {"id": session_id, "settings": settings, "system_prompt": "Be exact."}
    alpha.post("/sessions", json=created).raise_for_status()
    turns = [
        {"role": "user" if i % 2 == 0 else "assistant", "content": f"step {i}: " + "detail " * 300}
        for i in range(60)
    ]
    alpha.post(f"/sessions/{session_id}/messages", json={"messages": turns}).raise_for_status()


def seed(base_url: str) -> None:
    seed_demo(base_url, KEY_A, DEMO)
    with httpx.Client(
        base_url=base_url, headers={"Authorization": f"Bearer {KEY_A}"}, timeout=30
    ) as alpha:
        seed_fold_due(alpha, FOLD_DUE)
        alpha.post("/sessions", json={"id": BLOCKS}).raise_for_status()
        alpha.post(
            f"/sessions/{BLOCKS}/messages", json={"messages": block_messages()}
        ).raise_for_status()
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


# One server per database for the whole run: the modules share it, each test on sessions of
# its own (or on the seeded ones, which no test changes but the actions test on beta's).
@pytest.fixture(
    scope="session", params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)]
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
        DATABASE_URLS[served.base_url] = url
        yield served
    finally:
        served.stop()
        if request.param == "postgres":
            off_loop(drop_postgres_database, database)


@pytest.fixture(scope="session")
def long_session(server: Server) -> str:
    """LONG, seeded on the first use of each database's server."""
    if server.base_url not in LONG_SEEDED:
        url = DATABASE_URLS[server.base_url]
        off_loop(seed_long_session, server.base_url, KEY_A, url, LONG, LONG_COUNT)
        LONG_SEEDED.add(server.base_url)
    return LONG
