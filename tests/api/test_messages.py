from __future__ import annotations

import asyncio
from typing import Any

import httpx

from tests.support.factories import (
    append,
    assert_error,
    assistant,
    create_session,
    openai_tool_call,
    openai_tool_result,
    tool_result,
    tool_use,
    user,
)
from tests.support.official_types import assert_official_items


async def stored(client: httpx.AsyncClient, session_id: str) -> list[dict[str, object]]:
    page = (await client.get(f"/sessions/{session_id}/messages", params={"limit": 1000})).json()
    messages: list[dict[str, object]] = page["messages"]
    return messages


class TestAppendMessages:
    async def test_spec_example_round_trips(self, client: httpx.AsyncClient) -> None:
        await create_session(client, id="chat-42")
        batch = [
            user("Fix the failing test", client_id="m1"),
            {
                "role": "assistant",
                "content": [
                    {"type": "text", "text": "Reading it."},
                    tool_use("tu_1", path="tests/test_api.py")["content"][0],
                ],
            },
            tool_result("tu_1", "def test_ok(): assert 1 == 2"),
        ]
        response = await client.post("/sessions/chat-42/messages", json={"messages": batch})
        assert response.status_code == 201
        appended = response.json()["messages"]
        assert [m["seq"] for m in appended] == [1, 2, 3]
        assert [m["client_id"] for m in appended] == ["m1", None, None]
        assert all(m["token_count"] > 0 and not m["duplicate"] for m in appended)
        rows = await stored(client, "chat-42")
        assert [r["content"] for r in rows] == [m["content"] for m in batch]
        assert [r["id"] for r in rows] == [m["id"] for m in appended]
        assert rows[0]["client_id"] == "m1"

    async def test_openai_shapes_are_accepted(self, client: httpx.AsyncClient) -> None:
        await create_session(client, id="oa", model="gpt-4o")
        appended = await append(
            client,
            "oa",
            {"role": "system", "content": "Be brief."},
            user("weather?"),
            openai_tool_call("call_1", "weather", '{"city": "Oslo"}'),
            openai_tool_result("call_1", "rain"),
        )
        rows = await stored(client, "oa")
        assert rows[2]["tool_calls"][0]["id"] == "call_1"  # type: ignore[index]
        assert rows[3]["tool_call_id"] == "call_1"
        assert [m["seq"] for m in appended] == [1, 2, 3, 4]

    async def test_token_count_grows_with_content(self, client: httpx.AsyncClient) -> None:
        await create_session(client, id="t")
        short, long = await append(client, "t", user("hi"), user("hi " * 200))
        assert long["token_count"] > short["token_count"] + 150

    async def test_retried_client_id_returns_the_stored_message(
        self, client: httpx.AsyncClient
    ) -> None:
        await create_session(client, id="idem")
        first = await append(client, "idem", user("once", client_id="c1"))
        again = await append(client, "idem", user("once", client_id="c1"), user("next"))
        assert again[0]["id"] == first[0]["id"]
        assert again[0]["seq"] == 1 and again[0]["duplicate"] is True
        assert again[1]["seq"] == 2 and again[1]["duplicate"] is False
        assert [r["seq"] for r in await stored(client, "idem")] == [1, 2]

    async def test_same_client_id_twice_in_one_batch_is_stored_once(
        self, client: httpx.AsyncClient
    ) -> None:
        await create_session(client, id="twice")
        result = await append(client, "twice", user("a", client_id="x"), user("a", client_id="x"))
        assert result[0]["id"] == result[1]["id"]
        assert result[1]["duplicate"] is True
        assert len(await stored(client, "twice")) == 1

    async def test_one_bad_message_stores_nothing(self, client: httpx.AsyncClient) -> None:
        await create_session(client, id="atomic")
        response = await client.post(
            "/sessions/atomic/messages",
            json={"messages": [user("fine"), {"role": "wizard", "content": "nope"}]},
        )
        error = assert_error(response, 422, "invalid_message")
        assert error["details"]["index"] == 1
        assert await stored(client, "atomic") == []
        # The seq counter did not move either: the next append starts at 1.
        assert (await append(client, "atomic", user("ok")))[0]["seq"] == 1

    async def test_empty_batch_and_missing_messages_are_422(
        self, client: httpx.AsyncClient
    ) -> None:
        await create_session(client, id="e")
        assert_error(
            await client.post("/sessions/e/messages", json={"messages": []}),
            422,
            "validation_error",
        )
        assert_error(await client.post("/sessions/e/messages", json={}), 422, "validation_error")

    async def test_unknown_session_is_404(self, client: httpx.AsyncClient) -> None:
        response = await client.post("/sessions/ghost/messages", json={"messages": [user("x")]})
        assert_error(response, 404, "session_not_found")

    async def test_concurrent_appends_get_gap_free_seqs(self, client: httpx.AsyncClient) -> None:
        await create_session(client, id="race")

        async def post(i: int) -> httpx.Response:
            body = {"messages": [user(f"m{i}-a"), user(f"m{i}-b")]}
            return await client.post("/sessions/race/messages", json=body)

        responses = await asyncio.gather(*(post(i) for i in range(8)))
        assert all(r.status_code == 201 for r in responses), [r.text for r in responses]
        seqs = sorted(m["seq"] for r in responses for m in r.json()["messages"])
        assert seqs == list(range(1, 17))
        # Each batch is contiguous: its two messages got adjacent seqs.
        for r in responses:
            a, b = (m["seq"] for m in r.json()["messages"])
            assert b == a + 1

    async def test_concurrent_retries_of_one_client_id_store_it_once(
        self, client: httpx.AsyncClient
    ) -> None:
        await create_session(client, id="retry")
        body = {"messages": [user("pay once", client_id="charge-1")]}
        responses = await asyncio.gather(
            *(client.post("/sessions/retry/messages", json=body) for _ in range(6))
        )
        assert all(r.status_code == 201 for r in responses), [r.text for r in responses]
        results = [r.json()["messages"][0] for r in responses]
        assert len({m["id"] for m in results}) == 1
        assert sum(not m["duplicate"] for m in results) == 1
        assert [r["seq"] for r in await stored(client, "retry")] == [1]


class TestListMessages:
    async def test_pages_in_seq_order_until_null_cursor(self, client: httpx.AsyncClient) -> None:
        await create_session(client, id="p")
        await append(client, "p", *(user(f"message {i}") for i in range(7)))
        seqs: list[int] = []
        after = 0
        while True:
            page = (
                await client.get("/sessions/p/messages", params={"after_seq": after, "limit": 3})
            ).json()
            seqs += [m["seq"] for m in page["messages"]]
            if page["next_after_seq"] is None:
                break
            after = page["next_after_seq"]
        assert seqs == list(range(1, 8))

    async def test_full_stored_message_fields(self, client: httpx.AsyncClient) -> None:
        await create_session(client, id="f")
        await append(client, "f", user("hi", name="ada", metadata={"k": "v"}))
        (row,) = await stored(client, "f")
        assert set(row) == {
            "id", "seq", "role", "content", "name", "tool_calls", "tool_call_id",
            "metadata", "token_count", "client_id", "created_at", "items",
        }  # fmt: skip
        assert row["name"] == "ada" and row["metadata"] == {"k": "v"}
        assert row["items"] is None, "items only with format=openai_responses"

    async def test_format_openai_responses_adds_each_message_as_items(
        self, client: httpx.AsyncClient
    ) -> None:
        await create_session(client, id="r")
        posted: list[dict[str, Any]] = [
            {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "go"}]},
            {"type": "reasoning", "id": "rs_1", "summary": []},
            {"type": "function_call", "call_id": "c1", "name": "run", "arguments": "{}"},
        ]
        await append(client, "r", *posted, openai_tool_result("c1", "done"), assistant("ok"))
        params: dict[str, Any] = {"format": "openai_responses", "limit": 2}
        page = (await client.get("/sessions/r/messages", params=params)).json()
        assert [m["seq"] for m in page["messages"]] == [1, 2] and page["next_after_seq"] == 2
        assert [m["items"] for m in page["messages"]] == [posted[:1], posted[1:]]
        params["after_seq"] = 2
        rest = (await client.get("/sessions/r/messages", params=params)).json()["messages"]
        items = [item for m in rest for item in m["items"]]
        assert items == [
            {"type": "function_call_output", "call_id": "c1", "output": "done"},
            {"type": "message", "role": "assistant", "content": "ok"},
        ]
        assert rest[0]["role"] == "tool", "the stored fields stay"
        assert_official_items(posted + items)
        bad = await client.get("/sessions/r/messages", params={"format": "anthropic"})
        assert_error(bad, 422, "validation_error")

    async def test_bad_query_is_422_and_missing_session_404(
        self, client: httpx.AsyncClient
    ) -> None:
        await create_session(client, id="q")
        assert_error(await client.get("/sessions/q/messages?after_seq=-1"), 422, "validation_error")
        assert_error(await client.get("/sessions/q/messages?limit=0"), 422, "validation_error")
        assert_error(await client.get("/sessions/none/messages"), 404, "session_not_found")

    async def test_assistant_helper_shape(self, client: httpx.AsyncClient) -> None:
        await create_session(client, id="a")
        await append(client, "a", user("q"), assistant("a"))
        assert [r["role"] for r in await stored(client, "a")] == ["user", "assistant"]
