"""POST /sessions/{id}/turn (SPEC §13): the append of POST …/messages, then the context of
GET …/context right after, in one request.

The twin of a turn is the same session under another tenant (same id, same messages) that
appends and then reads: its context must be the turn's, byte for byte, since the message ids
the server assigns appear in neither (but for a fold's `through_id`)."""

from __future__ import annotations

from typing import Any

import httpx
import pytest
from fastapi import FastAPI

from app.core.metrics import CONTEXT_LOADS
from app.main import create_app
from tests.support.apps import MakeClient, make_settings
from tests.support.factories import (
    append,
    assert_error,
    comparable,
    create_session,
    stored,
    tool_result,
    tool_use,
    turns,
    user,
)

KEYS = "turning:key-t,reading:key-r"
SYSTEM = "You are a careful coding assistant."


@pytest.fixture
async def keyed(db_url: str) -> FastAPI:
    """An app with two tenants."""
    return create_app(make_settings(db_url, api_keys=KEYS))


async def _client(make_client: MakeClient, app: FastAPI, key: str) -> httpx.AsyncClient:
    client = await make_client(app)
    client.headers["Authorization"] = f"Bearer {key}"
    return client


@pytest.fixture
async def twins(make_client: MakeClient, keyed: FastAPI) -> tuple[httpx.AsyncClient, ...]:
    """Two tenants, each with session "chat": the first takes turns, the second appends and
    reads."""
    clients = (
        await _client(make_client, keyed, "key-t"),
        await _client(make_client, keyed, "key-r"),
    )
    for client in clients:
        await create_session(client, id="chat", system_prompt=SYSTEM)
    return clients


async def turn(
    client: httpx.AsyncClient, session_id: str, messages: list[dict[str, Any]], **context: Any
) -> httpx.Response:
    return await client.post(
        f"/sessions/{session_id}/turn", json={"messages": messages, "context": context}
    )


def as_query(context: dict[str, Any]) -> dict[str, Any]:
    return {k: ("true" if v else "false") if isinstance(v, bool) else v for k, v in context.items()}


def context_bytes(response: httpx.Response) -> bytes:
    """The `context` of a turn's body as sent (the body is `{"append":…,"context":…}`)."""
    assert response.status_code == 201, response.text
    head, separator, context = response.content.partition(b',"context":')
    assert head.startswith(b'{"append":') and separator and context.endswith(b"}")
    return context[:-1]


def without_ids(append_result: dict[str, Any]) -> list[dict[str, Any]]:
    return [
        {k: v for k, v in m.items() if k not in ("id", "created_at")}
        for m in append_result["messages"]
    ]


QUERIES = [
    {},
    {"max_tokens": 1500},
    {"model": "gpt-4o", "format": "openai", "max_tokens": 2500, "keep_recent": 2},
    {"format": "raw", "threshold": 0.5, "pin_first_message": False},
    {"format": "openai_responses", "summarize": "never", "max_tokens": 1200},
]


class TestTheContextIsGetRightAfter:
    @pytest.mark.parametrize("query", QUERIES)
    async def test_byte_for_byte_turn_after_turn(
        self, twins: tuple[httpx.AsyncClient, ...], query: dict[str, Any]
    ) -> None:
        turning, reading = twins
        batches = [
            [user("Fix the failing test", client_id="m1")],
            [tool_use("tu_1", path="tests/test_api.py"), tool_result("tu_1", "line\n" * 400)],
            turns(3, words=40),
            [user("And the edge cases?")],
        ]
        for batch in batches:
            taken = await turn(turning, "chat", batch, **query)
            appended = await reading.post("/sessions/chat/messages", json={"messages": batch})
            read = await reading.get("/sessions/chat/context", params=as_query(query))
            assert read.status_code == 200, read.text
            assert context_bytes(taken) == read.content
            assert without_ids(taken.json()["append"]) == without_ids(appended.json())
        assert len(await stored(turning, "chat")) == len(await stored(reading, "chat"))

    async def test_a_turn_that_folds_answers_the_folded_context(
        self, twins: tuple[httpx.AsyncClient, ...]
    ) -> None:
        turning, reading = twins
        history = turns(12, words=80)
        for client in twins:
            await append(client, "chat", *history)
        newest = [user("Now write the summary of the changes.")]
        taken = await turn(turning, "chat", newest, max_tokens=2000)
        await append(reading, "chat", *newest)
        read = await reading.get("/sessions/chat/context", params={"max_tokens": 2000})
        context = taken.json()["context"]
        assert context["summarized"] is True and context["summary"]["version"] == 1
        assert context["usage"]["total_tokens"] <= context["usage"]["budget"]
        body = comparable(read)
        assert body["summarized"] is True
        assert {**context, "summary": body["summary"]} == body
        assert context["summary"]["through_id"] != read.json()["summary"]["through_id"]

    async def test_a_get_after_the_turn_is_a_cache_hit_of_the_same_context(
        self, make_client: MakeClient, keyed: FastAPI
    ) -> None:
        client = await _client(make_client, keyed, "key-t")
        await create_session(client, id="s")
        await append(client, "s", *turns(2))
        query = {"max_tokens": 3000, "keep_recent": 4}
        taken = (await turn(client, "s", [user("next")], **query)).json()
        hits = keyed.state.read_path.responses.hits
        read = await client.get("/sessions/s/context", params=query)
        assert keyed.state.read_path.responses.hits == hits + 1
        body = read.json()
        context = taken["context"]
        # The read right after sees the turn's context as the previous one: all of it cached.
        assert body["usage"].pop("cache") == {
            "prefix_tokens": context["usage"]["estimated_tokens"],
            "reason": "none",
            "breakpoints": context["usage"]["cache"]["breakpoints"],
        }
        context["usage"].pop("cache")
        assert body == context

    async def test_the_next_turn_reads_only_the_new_messages(
        self, client: httpx.AsyncClient
    ) -> None:
        await create_session(client, id="s")
        await turn(client, "s", turns(3), max_tokens=5000)
        appended, full = CONTEXT_LOADS.labels("appended"), CONTEXT_LOADS.labels("full")
        before = appended._value.get(), full._value.get()
        for number in range(3):
            await turn(client, "s", [user(f"turn {number}")], max_tokens=5000)
        assert (appended._value.get(), full._value.get()) == (before[0] + 3, before[1])


class TestRetries:
    async def test_a_retried_turn_stores_once_and_answers_the_same_context(
        self, client: httpx.AsyncClient
    ) -> None:
        await create_session(client, id="s", system_prompt=SYSTEM)
        await append(client, "s", *turns(3))
        batch = [user("Run the tests", client_id="u1"), {**tool_use("tu_9"), "client_id": "a1"}]
        first = await turn(client, "s", batch, max_tokens=4000)
        again = await turn(client, "s", batch, max_tokens=4000)
        assert first.status_code == again.status_code == 201, again.text
        appended, retried = first.json()["append"]["messages"], again.json()["append"]["messages"]
        assert [m["duplicate"] for m in appended] == [False, False]
        assert [m["duplicate"] for m in retried] == [True, True]
        assert [(m["id"], m["seq"]) for m in retried] == [(m["id"], m["seq"]) for m in appended]
        assert len(await stored(client, "s")) == 8
        read = await client.get("/sessions/s/context", params={"max_tokens": 4000})
        assert context_bytes(again) == read.content
        first_context, retried_context = first.json()["context"], again.json()["context"]
        for body in (first_context, retried_context):
            del body["usage"]["cache"]  # measured against the context served before each
        assert retried_context == first_context

    async def test_a_partly_stored_batch_stores_only_the_rest(
        self, client: httpx.AsyncClient
    ) -> None:
        await create_session(client, id="s")
        await turn(client, "s", [user("one", client_id="c1")])
        response = await turn(client, "s", [user("one", client_id="c1"), user("two")])
        messages = response.json()["append"]["messages"]
        assert [(m["seq"], m["duplicate"]) for m in messages] == [(1, True), (2, False)]
        assert response.json()["context"]["messages_total"] == 2


class TestRefusedTurnsStoreNothing:
    @pytest.mark.parametrize(
        ("context", "code"),
        [
            ({"dry_run": True}, "validation_error"),
            ({"preview": True}, "validation_error"),
            ({"max_token": 2000}, "validation_error"),  # a typo is not ignored
            ({"max_tokens": 0}, "validation_error"),
            ({"max_tokens": "2000"}, "validation_error"),  # JSON types, not query text
            ({"explain": "true"}, "validation_error"),
            ({"format": "xml"}, "validation_error"),
            ({"summarize": "sometimes"}, "validation_error"),
            ({"threshold": 1.5}, "validation_error"),
            ({"summarizer": "somebody:model"}, "validation_error"),
            ({"model": "no-such-model-9"}, "unknown_model"),
        ],
    )
    async def test_an_invalid_context_query(
        self, client: httpx.AsyncClient, context: dict[str, Any], code: str
    ) -> None:
        await create_session(client, id="s")
        response = await turn(client, "s", [user("hello", client_id="h1")], **context)
        error = assert_error(response, 422, code)
        assert "context" in error["message"] or code == "unknown_model"
        assert await stored(client, "s") == []

    async def test_look_only_keys_say_why(self, client: httpx.AsyncClient) -> None:
        await create_session(client, id="s")
        response = await turn(client, "s", [user("hello")], dry_run=True)
        assert "a turn appends" in assert_error(response, 422, "validation_error")["message"]

    async def test_an_invalid_message_stores_none_of_the_batch(
        self, client: httpx.AsyncClient
    ) -> None:
        await create_session(client, id="s")
        bad = [user("fine"), {"role": "wizard", "content": "nope"}]
        error = assert_error(await turn(client, "s", bad), 422, "invalid_message")
        assert error["details"]["index"] == 1
        assert await stored(client, "s") == []

    @pytest.mark.parametrize(
        "body",
        [
            {"context": {}},
            {"messages": [], "context": {}},
            {"messages": [{"role": "user", "content": "x"}], "context": None},
            {"messages": [{"role": "user", "content": "x"}], "extra": 1},
        ],
    )
    async def test_a_malformed_body(self, client: httpx.AsyncClient, body: dict[str, Any]) -> None:
        await create_session(client, id="s")
        response = await client.post("/sessions/s/turn", json=body)
        assert_error(response, 422, "validation_error")
        assert await stored(client, "s") == []

    async def test_an_unknown_session_is_404(self, make_client: MakeClient, keyed: FastAPI) -> None:
        owner = await _client(make_client, keyed, "key-t")
        other = await _client(make_client, keyed, "key-r")
        await create_session(owner, id="mine")
        for client, session in ((owner, "missing"), (other, "mine")):
            response = await turn(client, session, [user("hello")])
            assert_error(response, 404, "session_not_found")
        assert await stored(owner, "mine") == []

    async def test_an_unknown_query_parameter_is_422(self, client: httpx.AsyncClient) -> None:
        await create_session(client, id="s")
        response = await client.post(
            "/sessions/s/turn?max_tokens=100", json={"messages": [user("x")]}
        )
        assert_error(response, 422, "unknown_query_parameter")
        assert await stored(client, "s") == []


async def test_a_budget_too_small_after_the_append_says_what_was_stored(
    client: httpx.AsyncClient,
) -> None:
    """Only assembling tells whether the system prompt fits the budget: the messages are then
    stored, and the error says so."""
    await create_session(client, id="s", system_prompt="word " * 400)
    response = await turn(client, "s", [user("hi", client_id="h")], max_tokens=100)
    error = assert_error(response, 422, "budget_too_small")
    assert "stored" in error["message"]
    assert error["details"]["append"]["messages"][0]["client_id"] == "h"
    assert error["details"]["context"]["budget"] == 100
    assert [m["client_id"] for m in await stored(client, "s")] == ["h"]


async def test_openapi_documents_the_turn_as_the_two_bodies(client: httpx.AsyncClient) -> None:
    document = (await client.get("/openapi.json")).json()
    operation = document["paths"]["/sessions/{session_id}/turn"]["post"]
    assert operation["description"] and operation["summary"]
    request = operation["requestBody"]["content"]["application/json"]
    assert request["schema"]["$ref"].endswith("/TurnRequest") and request["examples"]
    created = operation["responses"]["201"]["content"]["application/json"]["schema"]
    assert created["$ref"].endswith("/TurnResponse")
    schemas = document["components"]["schemas"]
    parts = schemas["TurnResponse"]["properties"]
    assert parts["append"]["$ref"].endswith("/AppendResult")
    assert parts["context"]["$ref"].endswith("/ContextResponse")
    get = document["paths"]["/sessions/{session_id}/context"]["get"]
    query = {p["name"] for p in get["parameters"] if p["in"] == "query"}
    assert set(schemas["TurnContext"]["properties"]) == query - {"preview", "dry_run"}
