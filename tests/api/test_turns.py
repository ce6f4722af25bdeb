"""The turn (SPEC §12): append, then read the context. A read after appends is built on the
snapshot served before plus the new rows, gives exactly the bytes a full assembly gives, and
writes nothing unless the context's shape changed."""

from __future__ import annotations

import re
import uuid
from typing import Any

import httpx
import pytest
from fastapi import FastAPI
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from app.core.metrics import CONTEXT_LOADS
from app.main import create_app
from app.repositories.context import ContextRepository
from app.services.prompt_cache import PromptRecords
from tests.support.apps import MakeClient, make_settings
from tests.support.factories import (
    append,
    assistant,
    context,
    create_session,
    tool_result,
    tool_use,
    turns,
    user,
)
from tests.support.factories import comparable as served_cache_comparable
from tests.support.recording_summarizer import RecordingSummarizer

UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")


def loads(kind: str) -> float:
    return float(CONTEXT_LOADS.labels(kind)._value.get())


def comparable(response: httpx.Response) -> dict[str, Any]:
    """The body, but for the session and message ids (one per world)."""
    body: dict[str, Any] = served_cache_comparable(response)
    body.pop("session_id")
    body["warnings"] = [UUID.sub("<id>", warning) for warning in body["warnings"]]
    return body


@pytest.fixture
def writes(monkeypatch: pytest.MonkeyPatch) -> list[dict[str, Any]]:
    """The records GET …/context writes."""
    written: list[dict[str, Any]] = []
    record = ContextRepository.record_served

    async def counted(self: ContextRepository, pk: int, model: str, value: dict[str, Any]) -> None:
        written.append(value)
        await record(self, pk, model, value)

    monkeypatch.setattr(ContextRepository, "record_served", counted)
    return written


class TestNoWriteAfterAppends:
    async def test_a_read_after_appends_writes_nothing_and_reports_the_whole_previous_context(
        self, client: httpx.AsyncClient, writes: list[dict[str, Any]]
    ) -> None:
        await create_session(client, id="s")
        await append(client, "s", *turns(2))
        previous = await context(client, "s")
        assert len(writes) == 1 and previous["usage"]["cache"]["reason"] == "first"
        for i in range(4):
            await append(client, "s", user(f"turn {i}: " + "more " * 30))
            body = await context(client, "s")
            assert body["usage"]["cache"]["reason"] == "none"
            assert body["usage"]["cache"]["prefix_tokens"] == previous["usage"]["estimated_tokens"]
            previous = body
        assert len(writes) == 1
        await context(client, "s", max_tokens=3000)  # another budget: another shape
        assert len(writes) == 2

    async def test_usage_reports_refer_to_the_context_served_last(
        self, make_client: MakeClient, db_url: str, writes: list[dict[str, Any]]
    ) -> None:
        serving = await make_client(create_app(make_settings(db_url)))
        other = await make_client(create_app(make_settings(db_url)))
        await create_session(serving, id="s")
        await append(serving, "s", *turns(2))
        recorded = (await context(serving, "s"))["usage"]["estimated_tokens"]
        await append(serving, "s", *turns(2, start=2))
        last = (await context(serving, "s"))["usage"]["estimated_tokens"]
        assert last > recorded and len(writes) == 1
        # Another replica knows the context recorded last (the same shape, fewer messages).
        on_other = await other.post("/sessions/s/usage", json={"input_tokens": 1000})
        assert on_other.json()["estimated_tokens"] == recorded
        on_serving = await serving.post("/sessions/s/usage", json={"input_tokens": 1000})
        assert on_serving.json()["estimated_tokens"] == last


# One turn: what is appended before the context is read.
TURN = st.one_of(
    st.tuples(st.just("chat"), st.integers(1, 3)),
    st.tuples(st.just("tool"), st.integers(50, 1500)),
    st.tuples(st.just("pending"), st.just(0)),
)
READ = st.sampled_from(
    [
        {"max_tokens": 1500},
        {"max_tokens": 4000, "format": "openai"},
        {"max_tokens": 2500, "explain": "true"},
        {"max_tokens": 1200, "format": "raw", "keep_recent": 2},
    ]
)


def turn_messages(kind: str, size: int, number: int) -> list[dict[str, Any]]:
    if kind == "chat":
        return turns(size, start=number, words=25)
    call = f"call_{number}"
    if kind == "pending":  # a call whose result comes with the next turn (or never)
        return [user(f"Task {number}"), tool_use(call, path=f"f{number}.py")]
    return [
        user(f"Look at {number}"),
        tool_use(call, path=f"f{number}.py"),
        tool_result(call, "line\n" * size),
        assistant(f"Read f{number}.py"),
    ]


@pytest.fixture
async def worlds(make_client: MakeClient, db_url: str) -> tuple[httpx.AsyncClient, ...]:
    """Two replicas of one database: the first builds on what it served before, the second
    (cache off) assembles every context from a full read."""
    apps: list[FastAPI] = [
        create_app(make_settings(db_url), summarizer_factory=RecordingSummarizer().factory),
        create_app(
            make_settings(db_url, context_cache_bytes=0),
            summarizer_factory=RecordingSummarizer().factory,
        ),
    ]
    return tuple([await make_client(app) for app in apps])


@settings(
    max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(read=READ, sequence=st.lists(TURN, min_size=3, max_size=14))
async def test_a_context_built_on_the_last_one_is_the_full_assembly_byte_for_byte(
    worlds: tuple[httpx.AsyncClient, ...], read: dict[str, Any], sequence: list[tuple[str, int]]
) -> None:
    sessions = [f"t-{uuid.uuid4().hex}" for _ in worlds]
    for client, sid in zip(worlds, sessions, strict=True):
        await create_session(client, id=sid, system_prompt="Be exact.")
        await append(client, sid, user("The task: keep every file small."))
    built = loads("appended")
    pending = False
    for number, (kind, size) in enumerate(sequence):
        messages = turn_messages(kind, size, number)
        if pending and kind != "pending":  # answer the call left pending last turn
            messages = [tool_result(f"call_{number - 1}", "done"), *messages]
        pending = kind == "pending"
        bodies = []
        for client, sid in zip(worlds, sessions, strict=True):
            await append(client, sid, *messages)
            response = await client.get(f"/sessions/{sid}/context", params=read)
            assert response.status_code == 200, response.text
            bodies.append(comparable(response))
        assert bodies[0] == bodies[1]
        assert bodies[0]["usage"]["total_tokens"] <= bodies[0]["usage"]["budget"]
    assert loads("appended") > built  # the first world did build on what it served


def test_the_records_a_replica_remembers_are_bounded_by_their_bytes() -> None:
    records = PromptRecords(max_bytes=100_000)
    shape = {"version": 0, "anchor": None, "settings": "s", "limit": 8000, "pruned": 0}
    chain = [f"{n:016x}" for n in range(100)]
    for pk in range(1_000):
        records.remember(("t", pk, "m"), {**shape, "chain": chain, "through_seq": 10})
    assert records.size <= 100_000
    recorded = {**shape, "chain": chain[:50], "through_seq": 5}
    assert records.previous(("t", 0, "m"), recorded) is recorded  # the oldest went first
    assert records.previous(("t", 999, "m"), recorded)["through_seq"] == 10  # it extends it
