"""The Agents SDK `Session` protocol, written from its docstrings, run side by side against the
SDK's own `SQLiteSession` and `FoldwiseSession` (a real server, SQLite and PostgreSQL):

- `get_items(limit)`: the history in order; with `limit` the latest `limit` items in
  chronological order; `limit=None` falls back to `session_settings.limit`.
- `add_items(items)`: appends.
- `pop_item()`: removes and returns the most recent item; None when the session is empty.
- `clear_session()`: clears all items.

Items are compared by what they say (`said`), not byte for byte: Foldwise serves a posted
`{"role": "user", "content": "hi"}` as the equivalent input_text item. The one documented
difference: a reasoning item goes with the item it precedes when that item is popped (alone,
no Responses backend takes it), so histories are compared as a model would receive them.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any, cast

import pytest
from agents.items import TResponseInputItem
from agents.memory import Session, SessionSettings, SQLiteSession
from foldwise_client.agents import FoldwiseSession

from tests.pyclient.conftest import new_id
from tests.support.servers import Server

MakeSession = Callable[..., Session]
THREADS = 5
APPENDS_PER_THREAD = 4


@pytest.fixture(params=["SQLiteSession", "FoldwiseSession"])
async def make_session(
    request: pytest.FixtureRequest,
    server: Server,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> AsyncIterator[MakeSession]:
    """`make_session(session_id=None, settings=None)`: a new, empty session of the kind (a
    FoldwiseSession with a client of its own, as made without `client=`)."""
    monkeypatch.setenv("FOLDWISE_BASE_URL", server.base_url)
    made: list[Session] = []

    def make(session_id: str | None = None, settings: SessionSettings | None = None) -> Session:
        sid = session_id or new_id("contract")
        session: Session
        if request.param == "SQLiteSession":
            session = SQLiteSession(sid, tmp_path / "agents.db", session_settings=settings)
        else:
            session = FoldwiseSession(sid, session_settings=settings)
        made.append(session)
        return session

    yield make
    for session in made:
        if isinstance(session, FoldwiseSession):
            await session.close()
        else:
            cast(SQLiteSession, session).close()


def user(text: str) -> dict[str, Any]:
    return {"role": "user", "content": text}


def answer(text: str, item_id: str | None = None) -> dict[str, Any]:
    if item_id is None:
        return {"type": "message", "role": "assistant", "content": text}
    part = {"type": "output_text", "text": text, "annotations": []}
    return {"type": "message", "role": "assistant", "id": item_id, "status": "completed"} | {
        "content": [part]
    }


def reasoning(item_id: str) -> dict[str, Any]:
    return {"type": "reasoning", "id": item_id, "summary": []}


def call(call_id: str) -> dict[str, Any]:
    return {"type": "function_call", "call_id": call_id, "name": "lookup", "arguments": "{}"}


def output(call_id: str, text: str) -> dict[str, Any]:
    return {"type": "function_call_output", "call_id": call_id, "output": text}


def said(item: Any) -> tuple[Any, ...]:
    """What an item says, whatever its equivalent shape."""
    kind = item.get("type", "message")
    if kind == "message":
        content = item["content"]
        parts = [content] if isinstance(content, str) else [p.get("text") for p in content]
        return (kind, item["role"], "\n".join(parts))
    if kind == "function_call":
        return (kind, item["call_id"], item["name"], item["arguments"])
    if kind == "function_call_output":
        return (kind, item["call_id"], item["output"])
    return (kind, item.get("id"))


def sendable(items: list[tuple[Any, ...]]) -> list[tuple[Any, ...]]:
    """A history as a model receives it: without trailing reasoning items."""
    out = list(items)
    while out and out[-1][0] == "reasoning":
        out.pop()
    return out


async def history(session: Session, limit: int | None = None) -> list[tuple[Any, ...]]:
    return [said(item) for item in await session.get_items(limit)]


async def add(session: Session, *items: dict[str, Any]) -> None:
    await session.add_items(cast(list[TResponseInputItem], list(items)))


async def popped(session: Session) -> tuple[Any, ...] | None:
    item = await session.pop_item()
    return None if item is None else said(item)


CONVERSATION = [user("one"), answer("two"), user("three"), answer("four"), user("five")]


async def test_is_a_session(make_session: MakeSession) -> None:
    assert isinstance(make_session(), Session)


async def test_an_empty_session_has_no_items_and_pops_none(make_session: MakeSession) -> None:
    session = make_session()
    assert await session.get_items() == []
    assert await session.get_items(limit=3) == []
    assert await session.pop_item() is None
    await session.add_items([])
    assert await session.get_items() == []


async def test_added_items_come_back_in_order(make_session: MakeSession) -> None:
    session = make_session()
    await add(session, *CONVERSATION[:2])
    await add(session, *CONVERSATION[2:])
    assert await history(session) == [said(i) for i in CONVERSATION]


async def test_limit_is_the_latest_items_in_chronological_order(
    make_session: MakeSession,
) -> None:
    session = make_session()
    await add(session, *CONVERSATION)
    everything = await history(session)
    assert await history(session, limit=2) == everything[-2:]
    assert await history(session, limit=100) == everything
    assert await history(session, limit=0) == []


async def test_session_settings_limit_applies_when_no_limit_is_given(
    make_session: MakeSession,
) -> None:
    session = make_session(settings=SessionSettings(limit=3))
    await add(session, *CONVERSATION)
    assert await history(session) == [said(i) for i in CONVERSATION[-3:]]
    assert await history(session, limit=1) == [said(CONVERSATION[-1])], "explicit wins"


async def test_pop_removes_and_returns_the_most_recent_item(make_session: MakeSession) -> None:
    session = make_session()
    await add(session, *CONVERSATION)
    for remaining in range(len(CONVERSATION), 0, -1):
        before = await history(session)
        assert await popped(session) == before[-1]
        assert await history(session) == before[:-1]
        assert len(before) == remaining
    assert await session.pop_item() is None


async def test_pop_splits_a_turn_one_item_at_a_time(make_session: MakeSession) -> None:
    session = make_session()
    await add(session, user("go"), reasoning("rs_1"), call("c1"), call("c2"))
    await add(session, output("c1", "a"), output("c2", "b"))
    before = await history(session)
    assert [await popped(session) for _ in range(3)] == before[:-4:-1]
    assert await history(session) == before[:-3]  # user, reasoning, first call


@pytest.mark.parametrize("step", [[answer("done", "msg_1")], [call("c9")]])
async def test_pop_after_reasoning_leaves_a_sendable_history(
    make_session: MakeSession, step: list[dict[str, Any]]
) -> None:
    session = make_session()
    await add(session, user("go"), reasoning("rs_1"), *step)
    before = await history(session)
    assert await popped(session) == said(step[-1])
    assert sendable(await history(session)) == sendable(before[:-1])
    assert await popped(session) in (said(reasoning("rs_1")), said(user("go")))


async def test_clear_removes_every_item(make_session: MakeSession) -> None:
    session = make_session()
    await add(session, *CONVERSATION)
    await session.clear_session()
    assert await session.get_items() == []
    assert await session.pop_item() is None
    await add(session, user("again"))
    assert await history(session) == [said(user("again"))]
    await session.clear_session()
    await session.clear_session()  # clearing an empty session is fine
    assert await session.pop_item() is None


async def test_sessions_do_not_share_items(make_session: MakeSession) -> None:
    first, second = make_session(), make_session()
    await add(first, user("mine"))
    assert await second.get_items() == []
    assert await history(first) == [said(user("mine"))]


async def test_one_session_from_many_event_loops_and_threads(make_session: MakeSession) -> None:
    """As a web app holds one: `asyncio.run` per call, from several threads at once."""
    session = make_session()
    errors: list[BaseException] = []

    def worker(thread: int) -> None:
        for turn in range(APPENDS_PER_THREAD):
            try:
                asyncio.run(add(session, user(f"{thread}.{turn}")))
            except BaseException as error:  # reported below
                errors.append(error)

    threads = [threading.Thread(target=worker, args=(n,)) for n in range(THREADS)]
    await asyncio.to_thread(run_all, threads)
    assert errors == []
    stored = {text for _, _, text in await history(session)}
    expected = {f"{t}.{n}" for t in range(THREADS) for n in range(APPENDS_PER_THREAD)}
    assert stored == expected
    assert len(await session.get_items()) == THREADS * APPENDS_PER_THREAD


async def test_concurrent_calls_on_one_loop(make_session: MakeSession) -> None:
    session = make_session()
    calls: list[Awaitable[Any]] = [add(session, user(f"m{n}")) for n in range(10)]
    await asyncio.gather(*calls, session.get_items())
    assert sorted(text for _, _, text in await history(session)) == sorted(
        f"m{n}" for n in range(10)
    )


def run_all(threads: list[threading.Thread]) -> None:
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
