"""The reads of a context (app/repositories/context.py), run on the driver's own connections
(context_rows.py) or through the app's engine, see what the ORM sees: the same snapshot,
field for field, on SQLite and PostgreSQL."""

from __future__ import annotations

from typing import Any

import httpx
import pytest
from fastapi import FastAPI
from sqlalchemy import select

from app.core.db import session_scope
from app.core.errors import SessionNotFound
from app.main import create_app
from app.models import Message, Session
from app.repositories import context_rows
from app.repositories.context import (
    SESSION_FIELDS,
    ContextRepository,
    context_version,
    engine_message,
    session_row,
    stored_message,
)
from app.services.context import ContextAssembler, ContextOptions
from tests.support.apps import MakeClient, make_settings
from tests.support.factories import append, create_session, tool_result, tool_use, turns, user
from tests.support.recording_summarizer import RecordingSummarizer

OPTIONS = [
    ContextOptions(max_tokens=1200),
    ContextOptions(max_tokens=1200, explain=True),
    ContextOptions(model="gpt-4o", overrides={"keep_recent": 2, "pin_first_message": False}),
]


@pytest.fixture
def recorder() -> RecordingSummarizer:
    return RecordingSummarizer()


@pytest.fixture
async def app(db_url: str, recorder: RecordingSummarizer) -> FastAPI:
    return create_app(make_settings(db_url), summarizer_factory=recorder.factory)


def _assemblers(app: FastAPI, recorder: RecordingSummarizer) -> tuple[ContextAssembler, ...]:
    state = app.state
    snapshot = state.read_path.snapshot
    assert snapshot is not None
    common = (state.sessionmaker, "default", state.settings, state.registry, recorder.factory)
    return ContextAssembler(*common, snapshot), ContextAssembler(*common)


async def test_the_driver_snapshot_equals_the_orm_snapshot(
    make_client: MakeClient, app: FastAPI, recorder: RecordingSummarizer
) -> None:
    client: httpx.AsyncClient = await make_client(app)
    tools = [{"name": "read_file", "description": "Read", "input_schema": {"type": "object"}}]
    await create_session(client, id="s", system_prompt="Be exact.", tools=tools)
    calls = [
        m for i in range(3) for m in (tool_use(f"t{i}", path="a.py"), tool_result(f"t{i}", "ok"))
    ]
    tagged = user("with metadata", metadata={"source": "test", "n": [1, 2.5, None]})
    await append(client, "s", *calls, user("the task"), tagged, *turns(14))
    await append(client, "s", {"role": "assistant", "content": [{"type": "text", "text": "β 🙂"}]})
    driver, orm = _assemblers(app, recorder)
    for options in OPTIONS:  # before any fold
        assert await driver.loader.load("s", options) == await orm.loader.load("s", options)
    assert (await client.get("/sessions/s/context", params={"max_tokens": 1200})).status_code == 200
    assert (await client.post("/sessions/s/usage", json={"input_tokens": 900})).status_code == 200
    patched = await client.patch("/sessions/s", json={"settings": {"keep_recent": 3}})
    assert patched.status_code == 200
    for options in OPTIONS:  # folded, calibrated, served, patched
        snapshot = await driver.loader.load("s", options)
        assert snapshot == await orm.loader.load("s", options)
    assert snapshot.summary.version and snapshot.last_served
    assert (await driver.loader.load("s", OPTIONS[0])).calibration is not None


async def test_every_path_decodes_rows_as_the_orm_does(
    make_client: MakeClient, app: FastAPI, recorder: RecordingSummarizer
) -> None:
    """The one decoder of each read, over raw driver rows (text JSON on sqlite3 and the stamp
    reader's asyncpg connections, decoded JSON from SQLAlchemy's asyncpg connections), gives
    exactly the values SQLAlchemy's column types give the ORM."""
    client = await make_client(app)
    tools = [{"name": "t", "description": "β", "input_schema": {"type": "object"}}]
    await create_session(client, id="s", system_prompt="Be exact.", tools=tools)
    odd = [
        user("plain string"),
        user('"quoted" and \\ escaped \u2028 β 🙂'),
        {
            "role": "user",
            "content": [{"type": "text", "text": "a list"}],
            "metadata": {"n": [1, 2.5, None, True]},
        },
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {"id": "c1", "type": "function", "function": {"name": "f", "arguments": "{}"}}
            ],
        },
        {"role": "tool", "tool_call_id": "c1", "content": "42", "name": "f"},
    ]
    await append(client, "s", *odd)
    assert (await client.get("/sessions/s/context")).status_code == 200
    assert (await client.post("/sessions/s/usage", json={"input_tokens": 90})).status_code == 200
    async with session_scope(app.state.sessionmaker) as db:
        stored = (await db.execute(select(Message).order_by(Message.seq))).scalars().all()
        orm_session = (await db.execute(select(Session))).scalar_one()
        repo = ContextRepository(db)
        row, calibrations = await repo.session_for_context("default", "s")
        assert [stored_message(m) for m in stored] == await repo.messages_after(row.pk, 0)
        assert calibrations and all(c.samples == 1 for c in calibrations.values())
    for field in SESSION_FIELDS:
        assert getattr(row, field.key) == getattr(orm_session, field.key), field.key
    driver, _ = _assemblers(app, recorder)
    snapshot = await driver.loader.load("s", ContextOptions(max_tokens=100_000, explain=True))
    assert list(snapshot.messages) == [stored_message(m) for m in stored]
    assert snapshot.messages[1].content == '"quoted" and \\ escaped \u2028 β 🙂'
    async with app.state.engine.connect() as connection:
        state = await context_version(connection, "default", "s", "anthropic")
    assert state is not None and state.version.updated_at == orm_session.updated_at
    reader_state = await app.state.read_path.versions.read("default", "s", "anthropic")
    assert reader_state == state
    assert session_row([getattr(orm_session, f.key) for f in SESSION_FIELDS], True).pk == row.pk


async def test_a_long_or_large_sqlite_read_goes_through_the_engine(
    make_client: MakeClient,
    app: FastAPI,
    recorder: RecordingSummarizer,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    client = await make_client(app)
    await create_session(client, id="s")
    await append(client, "s", *turns(6))
    monkeypatch.setattr(context_rows, "MAX_LOOP_ROWS", 5)
    driver, orm = _assemblers(app, recorder)
    read = context_rows._SqliteReads.messages_after
    calls: list[int] = []

    async def counted(self: context_rows._SqliteReads, pk: int, after: int) -> object:
        calls.append(after)
        return await read(self, pk, after)

    monkeypatch.setattr(context_rows._SqliteReads, "messages_after", counted)
    assert await driver.loader.load("s", OPTIONS[0]) == await orm.loader.load("s", OPTIONS[0])
    if app.state.engine.dialect.name == "sqlite":
        assert calls == []  # 12 rows > 5: not read on the loop
    monkeypatch.setattr(context_rows, "MAX_LOOP_ROWS", 400)
    monkeypatch.setattr(context_rows, "MAX_LOOP_BYTES", 2000)  # a few messages' worth
    assert await driver.loader.load("s", OPTIONS[0]) == await orm.loader.load("s", OPTIONS[0])
    if app.state.engine.dialect.name == "sqlite":
        assert len(calls) == 1  # begun on the loop, given up past the bytes, read again
    read_on_the_loop = len(calls)
    assert await driver.loader.load("s", OPTIONS[1]) == await orm.loader.load("s", OPTIONS[1])
    assert len(calls) == read_on_the_loop  # an explained context is read by the ORM
    with pytest.raises(SessionNotFound):
        await driver.loader.load("nope", OPTIONS[0])
    assert await driver.loader.load("s", OPTIONS[0]) == await orm.loader.load(
        "s", OPTIONS[0]
    )  # reusable


async def test_pinned_candidates_past_the_postgres_statement_read_again_in_a_transaction(
    make_client: MakeClient,
    app: FastAPI,
    recorder: RecordingSummarizer,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    client = await make_client(app)
    await create_session(client, id="s")
    calls = [
        m for i in range(3) for m in (tool_use(f"t{i}", path="a.py"), tool_result(f"t{i}", "ok"))
    ]
    await append(client, "s", *calls, user("the task"), *turns(14))
    assert (await client.get("/sessions/s/context", params={"max_tokens": 1200})).status_code == 200
    # The statement's page holds only the first two user messages (tool results, unpinnable).
    monkeypatch.setattr(context_rows, "PINNED_PAGE", 2)
    driver, orm = _assemblers(app, recorder)
    snapshot = await driver.loader.load("s", OPTIONS[0])
    assert snapshot == await orm.loader.load("s", OPTIONS[0])
    assert snapshot.summary.version and snapshot.messages[0].content == "the task"


def test_a_row_read_again_is_not_decoded_again() -> None:
    decoded = context_rows.DecodedMessages(max_bytes=60)
    row = ("m1", 1, "user", '"hello"', 5, None, None, None, "{}")
    first = decoded(row)
    assert first == engine_message(row)
    assert decoded(tuple(row)) is first  # an equal row from another read: the same message
    edited = (*row[:3], '"hello!"', *row[4:])
    assert decoded(edited) == engine_message(edited) != first
    for index in range(2, 10):  # 15 bytes of text a row: four fit
        decoded((f"m{index}", index, "user", '"hello"', 5, None, None, None, "{}"))
    assert decoded.size <= 60
    assert decoded(row) is not first  # evicted, decoded again


async def test_a_snapshot_built_on_an_earlier_one_equals_a_full_read(
    make_client: MakeClient, app: FastAPI, recorder: RecordingSummarizer
) -> None:
    """After appends only the new messages are read onto the earlier snapshot; after a fold,
    a clear, a removal or a PATCH of `pin_first_message` the earlier one is not used."""
    client = await make_client(app)
    await create_session(client, id="s")
    await append(client, "s", user("the task"), *turns(6))
    driver, orm = _assemblers(app, recorder)
    bases = [await driver.loader.load("s", options) for options in OPTIONS]

    async def check(*changes: tuple[str, str, dict[str, Any]]) -> None:
        for method, path, kwargs in changes:
            response = await client.request(method, f"/sessions/s{path}", **kwargs)
            assert response.status_code < 300, response.text
        for index, options in enumerate(OPTIONS):
            full = await orm.loader.load("s", options)
            for assembler in (driver, orm):
                assert await assembler.loader.load("s", options, bases[index]) == full
            bases[index] = full

    await check(("POST", "/messages", {"json": {"messages": turns(3, start=6)}}))
    await check()  # nothing new
    await check(("POST", "/summarize", {}), ("POST", "/messages", {"json": {"messages": turns(1)}}))
    await check(("DELETE", "/messages/last", {}))
    await check(("PATCH", "", {"json": {"settings": {"pin_first_message": False}}}))
    await check(("POST", "/clear", {}), ("POST", "/messages", {"json": {"messages": turns(2)}}))
