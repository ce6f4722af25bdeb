"""Bad input gets a 4xx envelope, never a 500: random JSON at every route that takes a body.

Bodies are arbitrary JSON, or near-valid messages with random fields and content blocks,
which reach deeper than the schema layer. SQLite only; the routes are the same on both.
"""

from __future__ import annotations

import asyncio
import shutil
from contextlib import AsyncExitStack
from pathlib import Path
from typing import Any

import httpx
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from app.main import create_app
from tests.support.apps import make_settings
from tests.support.factories import tool_result, tool_use, user

ROUTES = [
    ("POST", "/sessions"),
    ("PATCH", "/sessions/f"),
    ("POST", "/sessions/f/messages"),
    ("POST", "/sessions/f/summarize"),
    ("POST", "/sessions/f/usage"),
    ("POST", "/count-tokens"),
    ("POST", "/assemble-context"),
    ("POST", "/summarize-context"),
]
SCALARS = st.none() | st.booleans() | st.integers(-(2**40), 2**40) | st.text(max_size=20)
JSON = st.recursive(
    SCALARS | st.floats(allow_nan=False, allow_infinity=False),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner),
    max_leaves=12,
)
KEYS = st.sampled_from(
    ["type", "text", "id", "name", "input", "tool_use_id", "content", "role", "tool_calls"]
)
BLOCKS = st.dictionaries(KEYS, JSON, max_size=4)
MESSAGES = st.fixed_dictionaries(
    {"role": st.sampled_from(["user", "assistant", "system", "tool", "x"])},
    optional={
        "content": st.text(max_size=30) | st.lists(BLOCKS, max_size=3) | JSON,
        "tool_calls": JSON,
        "tool_call_id": SCALARS,
        "name": SCALARS,
        "client_id": SCALARS,
        "metadata": JSON,
    },
)
BODIES = JSON | st.fixed_dictionaries(
    {"messages": st.lists(MESSAGES, max_size=4)},
    optional={
        "model": st.sampled_from(["gpt-4o", "claude-sonnet-4-5", "nope"]) | SCALARS,
        "max_tokens": st.integers(-5, 5000) | SCALARS,
        "format": st.sampled_from(["anthropic", "openai", "raw", "x"]),
        "strategy": st.sampled_from(["auto", "rule", "llm", "hybrid", "x"]),
        "max_summary_tokens": st.integers(-5, 2000),
        "summary": SCALARS,
        "system": SCALARS,
        "keep_recent": st.integers(-3, 10),
        "input_tokens": st.integers(-5, 10**6) | SCALARS,
        "settings": st.dictionaries(st.sampled_from(["threshold", "keep_recent", "x"]), JSON),
    },
)


def test_random_bodies_never_get_a_500(sqlite_template: Path, tmp_path: Path) -> None:
    db_file = tmp_path / "fuzz.db"
    shutil.copyfile(sqlite_template, db_file)
    loop = asyncio.new_event_loop()
    stack = AsyncExitStack()

    async def start() -> httpx.AsyncClient:
        app = create_app(make_settings(f"sqlite:///{db_file}"))
        await stack.enter_async_context(app.router.lifespan_context(app))
        client = await stack.enter_async_context(
            httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://fuzz")
        )
        await client.post("/sessions", json={"id": "f"})
        history = [user("task"), tool_use("c1", path="a.py"), tool_result("c1", "ok")]
        await client.post("/sessions/f/messages", json={"messages": history})
        await client.get("/sessions/f/context")
        return client

    client = loop.run_until_complete(start())

    @settings(
        max_examples=250, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
    )
    @given(route=st.sampled_from(ROUTES), body=BODIES)
    def check(route: tuple[str, str], body: Any) -> None:
        method, path = route
        response = loop.run_until_complete(client.request(method, path, json=body))
        assert response.status_code < 500, (route, body, response.text)
        if response.status_code >= 400:
            error = response.json()["error"]
            assert error["code"] and error["message"], response.text

    @settings(max_examples=100, deadline=None)
    @given(
        params=st.dictionaries(
            st.sampled_from(
                [
                    "model",
                    "max_tokens",
                    "format",
                    "summarize",
                    "explain",
                    "threshold",
                    "keep_recent",
                    "summary_placement",
                    "fold_target",
                    "max_summary_tokens",
                ]
            ),
            st.text(max_size=8) | st.integers(-10, 10**6).map(str),
        )
    )
    def check_context(params: dict[str, str]) -> None:
        response = loop.run_until_complete(client.get("/sessions/f/context", params=params))
        assert response.status_code < 500, (params, response.text)

    try:
        check()
        check_context()
    finally:
        loop.run_until_complete(stack.aclose())
        loop.close()
