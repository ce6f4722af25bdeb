"""Sessions with every kind of stored state, built through the API: appends in the three
shapes, folds, clears, removals, patches, usage reports and served contexts. Shared by the
data-lifecycle tests (hard delete, export / import, retention, copy)."""

from __future__ import annotations

import json
from typing import Any

import httpx
from hypothesis import strategies as st
from sqlalchemy import update

from app.models import Session
from tests.support import factories as make

# One step of a session's life; the integer sizes it.
STEP = st.one_of(
    st.tuples(st.just("chat"), st.integers(1, 3)),
    st.tuples(st.just("tool"), st.integers(20, 600)),
    st.tuples(st.just("openai"), st.integers(1, 50)),
    st.tuples(st.sampled_from(["fold", "clear", "remove", "patch", "usage", "read"]), st.just(0)),
)
TEXT = st.text(st.characters(blacklist_categories=["Cs"], blacklist_characters="\x00"), max_size=40)
SETUP = st.fixed_dictionaries(
    {
        "system_prompt": st.none() | TEXT,
        "metadata": st.dictionaries(
            TEXT,
            st.integers(-(2**60), 2**60) | TEXT | st.floats(-1e12, 1e12),
            max_size=3,
        ),
        "settings": st.fixed_dictionaries(
            {},
            optional={
                "keep_recent": st.integers(0, 8),
                "summary_placement": st.sampled_from(["system", "messages"]),
            },
        ),
    }
)


def step_messages(kind: str, size: int, number: int, marker: str = "") -> list[dict[str, Any]]:
    if kind == "chat":
        return [
            message
            for i in range(size)
            for message in (
                make.user(f"{marker} question {number}.{i} " * 8),
                make.assistant(f"answer {i} " * 12),
            )
        ]
    if kind == "tool":
        call = f"call_{number}"
        return [
            make.user(f"{marker} look at file {number}"),
            make.tool_use(call, path=f"src/f{number}.py"),
            make.tool_result(call, f"{marker} line\n" * size),
            make.assistant(
                f"Read f{number}.py", client_id=f"c{number}", metadata={"n": number * 1.5}
            ),
        ]
    call = f"oa_{number}"
    return [
        make.openai_tool_call(call, "grep", json.dumps({"pattern": "x", "n": size})),
        make.openai_tool_result(call, f"{marker} {size} hits"),
    ]


async def build_session(
    client: httpx.AsyncClient,
    session_id: str,
    steps: list[tuple[str, int]],
    setup: dict[str, Any] | None = None,
    marker: str = "",
) -> None:
    """A session living through `steps` (each must succeed, or be refused as the API says)."""
    await make.create_session(client, id=session_id, **(setup or {}))
    await make.append(client, session_id, make.user(f"{marker} The task: keep every file small."))
    for number, (kind, size) in enumerate(steps):
        path = f"/sessions/{session_id}"
        if kind in ("chat", "tool", "openai"):
            await make.append(client, session_id, *step_messages(kind, size, number, marker))
        elif kind == "fold":
            response = await client.post(f"{path}/summarize", json={})
            assert response.status_code == 200, response.text
        elif kind == "clear":
            assert (await client.post(f"{path}/clear")).status_code == 200
        elif kind == "remove":  # refused (409/404) when summarized, cleared or empty
            response = await client.delete(f"{path}/messages/last")
            assert response.status_code in (200, 404, 409), response.text
        elif kind == "patch":
            body = {"metadata": {"step": number}, "settings": {"keep_recent": number % 5}}
            assert (await client.patch(path, json=body)).status_code == 200
        elif kind == "usage":
            await read_context(client, session_id)
            response = await client.post(f"{path}/usage", json={"input_tokens": 900 + number})
            assert response.status_code in (200, 409, 422), response.text
        else:
            await read_context(client, session_id)


async def read_context(client: httpx.AsyncClient, session_id: str, **params: Any) -> httpx.Response:
    response = await client.get(
        f"/sessions/{session_id}/context", params={"max_tokens": 2500, **params}
    )
    assert response.status_code == 200, response.text
    return response


async def two_tenants(make_client: Any) -> tuple[httpx.AsyncClient, httpx.AsyncClient]:
    """Clients of tenants `a` and `b` on one database."""
    clients = []
    for tenant in ("a", "b"):
        client = await make_client(api_keys="a:key-a,b:key-b")
        client.headers["Authorization"] = f"Bearer key-{tenant}"
        clients.append(client)
    return clients[0], clients[1]


async def idle_since(app: Any, session_id: str, moment: Any) -> None:
    """Make the session's last activity `moment` (as if nothing was written since)."""
    async with app.state.engine.begin() as connection:
        stmt = update(Session).where(Session.external_id == session_id)
        await connection.execute(stmt.values(updated_at=moment))
