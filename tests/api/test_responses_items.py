"""OpenAI Responses items: posted on …/messages and the stateless routes, served with
`format=openai_responses` (docs/reference.md §Message shapes). SQLite and PostgreSQL."""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest

from tests.support.factories import (
    append,
    assert_error,
    assistant,
    context,
    create_session,
    stored,
    tool_use,
    user,
)
from tests.support.official_types import assert_official_function_tools, assert_official_items
from tests.support.responses_items import REASONING, call, output, said, typed

TOOL = {"type": "function", "name": "read_file", "description": "Read", "parameters": {}}


TURN = [
    said("user", "Fix the failing test"),
    REASONING,
    said("assistant", "Reading both files.", id="msg_1", status="completed"),
    call("call_1", "a.py", id="fc_1"),
    call("call_2", "b.py"),
    output("call_1", "def a(): ..."),
    output("call_2", "def b(): ..."),
]


async def post(client: httpx.AsyncClient, session_id: str, *items: Any) -> httpx.Response:
    return await client.post(f"/sessions/{session_id}/messages", json={"messages": list(items)})


class TestIngest:
    async def test_assistant_items_of_one_post_are_one_stored_message(
        self, client: httpx.AsyncClient
    ) -> None:
        await create_session(client, id="s")
        appended = await append(client, "s", *TURN)
        assert [m["indexes"] for m in appended] == [[0], [1, 2, 3, 4], [5], [6]]
        assert [m["seq"] for m in appended] == [1, 2, 3, 4]
        rows = await stored(client, "s")
        turn = rows[1]
        assert turn["role"] == "assistant"
        assert turn["content"] == [REASONING, {"type": "text", "text": "Reading both files."}]
        assert [c["id"] for c in turn["tool_calls"]] == ["call_1", "call_2"]
        assert turn["tool_calls"][0]["function"]["arguments"] == TURN[3]["arguments"]
        assert turn["metadata"]["extra"]["items"] == [
            {"index": 2, "type": "message", "id": "msg_1", "status": "completed", "block": 1},
            {"index": 3, "type": "function_call", "id": "fc_1", "call_id": "call_1"},
        ]
        assert [(r["role"], r["tool_call_id"]) for r in rows[2:]] == [
            ("tool", "call_1"),
            ("tool", "call_2"),
        ]

    async def test_items_mix_with_the_other_shapes(self, client: httpx.AsyncClient) -> None:
        await create_session(client, id="s")
        appended = await append(
            client,
            "s",
            user("plain"),
            {"role": "user", "content": [{"type": "input_text", "text": "easy form"}]},
            tool_use("tu_1", path="x"),
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "tu_1"}]},
            said("assistant", "done"),
        )
        assert [m["indexes"] for m in appended] == [[0], [1], [2], [3], [4]]
        rows = await stored(client, "s")
        assert rows[1]["content"] == [{"type": "text", "text": "easy form"}]
        assert rows[4]["content"] == [{"type": "text", "text": "done"}]

    async def test_an_output_may_answer_a_call_stored_by_an_earlier_post(
        self, client: httpx.AsyncClient
    ) -> None:
        await create_session(client, id="s")
        await append(client, "s", said("user", "go"), call("call_1"))
        response = await post(client, "s", output("call_1", "ok"))
        assert response.status_code == 201, response.text

    async def test_a_retried_post_is_a_no_op(self, client: httpx.AsyncClient) -> None:
        await create_session(client, id="s")
        items = [
            said("user", "go", client_id="u1"),
            {**REASONING, "client_id": "a1"},
            call("call_1", client_id="a1-call"),
            output("call_1", "ok", client_id="o1"),
        ]
        first = await append(client, "s", *items)
        again = await append(client, "s", *items)
        assert [m["duplicate"] for m in again] == [True, True, True]
        assert [m["id"] for m in again] == [m["id"] for m in first]
        assert [m["client_id"] for m in first] == ["u1", "a1", "o1"]
        assert len(await stored(client, "s")) == 3
        session = (await client.get("/sessions/s")).json()
        assert session["message_count"] == 3


class TestValidation:
    @pytest.mark.parametrize(
        ("items", "code", "index"),
        [
            ([{"type": "item_reference", "id": "msg_1"}], "unknown_item_type", 0),
            ([said("user", "hi"), {"type": "web_search_call"}], "unknown_item_type", 1),
            ([said("user", "hi"), output("call_9", "x")], "unmatched_call_output", 1),
            ([{**call("c1"), "arguments": "{not json"}], "invalid_arguments", 0),
            ([{**call("c1"), "arguments": "[1, 2]"}], "invalid_arguments", 0),
            ([{**call("c1"), "arguments": {"path": "a"}}], "invalid_arguments", 0),
            ([said("user", "hi"), REASONING], "dangling_reasoning", 1),
            ([REASONING, said("user", "hi")], "dangling_reasoning", 0),
            ([{**call("c1"), "name": ""}], "invalid_item", 0),
            ([{"type": "reasoning", "summary": "text"}, call("c1")], "invalid_item", 0),
            ([{"type": "message", "role": "tool", "content": "x"}], "invalid_item", 0),
            (
                [{"type": "message", "role": "user", "content": [{"type": "input_file"}]}],
                "invalid_item",
                0,
            ),
            (
                [{"role": "user", "content": [{"type": "input_image", "file_id": "f"}]}],
                "invalid_item",
                0,
            ),
            # A part type that is not a string (not hashable): a 422, never a 500.
            (
                [{"type": "message", "role": "user", "content": [{"type": [], "text": "x"}]}],
                "invalid_item",
                0,
            ),
            (
                [{"type": "message", "role": "user", "content": [{"type": {}, "text": "x"}]}],
                "invalid_item",
                0,
            ),
        ],
    )
    async def test_bad_items_are_422_with_the_index(
        self, client: httpx.AsyncClient, items: list[Any], code: str, index: int
    ) -> None:
        await create_session(client, id="s")
        error = assert_error(await post(client, "s", *items), 422, code)
        assert error["details"]["index"] == index
        assert (await client.get("/sessions/s")).json()["message_count"] == 0

    async def test_an_output_for_a_call_before_the_clear_marker_is_unmatched(
        self, client: httpx.AsyncClient
    ) -> None:
        await create_session(client, id="s")
        await append(client, "s", said("user", "go"), call("call_1"))
        assert (await client.post("/sessions/s/clear")).status_code == 200
        assert_error(
            await post(client, "s", output("call_1", "late")), 422, "unmatched_call_output"
        )

    async def test_call_ids_are_checked_like_the_other_shapes(
        self, client: httpx.AsyncClient
    ) -> None:
        await create_session(client, id="s")
        bad_id = await post(client, "s", said("user", "go"), call("call 1"))
        assert_error(bad_id, 422, "validation_error")
        twice = await post(client, "s", said("user", "go"), call("c1"), call("c1"))
        assert_error(twice, 422, "validation_error")
        await append(client, "s", said("user", "go"), call("c1"), output("c1", "ok"))
        reused = await post(client, "s", call("c1"), output("c1", "again"))
        assert_error(reused, 422, "invalid_message")
        deep = {**call("c2"), "arguments": '{"a": ' * 80 + "1" + "}" * 80}
        assert_error(await post(client, "s", deep), 422, "validation_error")
        nul = {**call("c3"), "arguments": '{"a": "\\u0000"}'}
        assert_error(await post(client, "s", nul), 422, "validation_error")


class TestContext:
    async def test_the_context_is_responses_input(self, client: httpx.AsyncClient) -> None:
        await create_session(client, id="s", system_prompt="Be brief.", tools=[TOOL])
        await append(client, "s", *TURN, said("assistant", "Fixed."))
        body = await context(client, "s", format="openai_responses")
        assert body["format"] == "openai_responses"
        assert body["system"] == "Be brief."
        assert body["tools"] == [TOOL]
        assert body["messages"] == [
            TURN[0],
            REASONING,
            TURN[2],  # with the id and status it was posted with
            TURN[3],
            call("call_2", "b.py"),
            TURN[5],
            TURN[6],
            said("assistant", "Fixed."),
        ]
        assert body["messages_included"] == 5  # stored messages, not items
        assert_official_items(body["messages"])

    async def test_tools_of_every_shape_become_flat_functions(
        self, client: httpx.AsyncClient
    ) -> None:
        tools = [
            {"name": "a", "description": "A", "input_schema": {"type": "object"}},
            {"type": "function", "function": {"name": "b", "parameters": {}, "strict": True}},
            TOOL,
        ]
        await create_session(client, id="s", tools=tools)
        await append(client, "s", user("hi"))
        responses = (await context(client, "s", format="openai_responses"))["tools"]
        a = {"type": "function", "name": "a", "description": "A", "parameters": {"type": "object"}}
        assert responses == [
            a | {"strict": False},  # as strict as an Anthropic tool: not unless it says so
            {"type": "function", "name": "b", "description": "", "parameters": {}, "strict": True},
            TOOL,  # a Responses tool as posted
        ]
        assert_official_function_tools(responses[:2])
        anthropic = (await context(client, "s", format="anthropic"))["tools"]
        assert anthropic[2] == {"name": "read_file", "description": "Read", "input_schema": {}}
        openai = (await context(client, "s", format="openai"))["tools"]
        assert openai[2] == {
            "type": "function",
            "function": {"name": "read_file", "description": "Read", "parameters": {}},
        }

    async def test_reasoning_is_dropped_in_the_other_formats(
        self, client: httpx.AsyncClient
    ) -> None:
        await create_session(client, id="s")
        await append(client, "s", *TURN)
        for fmt in ("anthropic", "openai"):
            sent = json.dumps((await context(client, "s", format=fmt))["messages"])
            assert "opaque-blob" not in sent and "reasoning" not in sent, fmt

    async def test_anthropic_thinking_is_dropped_in_responses(
        self, client: httpx.AsyncClient
    ) -> None:
        await create_session(client, id="s")
        thinking = {"type": "thinking", "thinking": "hmm", "signature": "c2ln"}
        await append(
            client,
            "s",
            user("go"),
            {"role": "assistant", "content": [thinking, {"type": "text", "text": "Done."}]},
            {"role": "assistant", "content": [thinking]},
            user("thanks"),
        )
        items = (await context(client, "s", format="openai_responses"))["messages"]
        assert items == [typed("go"), said("assistant", "Done."), typed("thanks")]

    async def test_summary_in_messages_is_a_user_and_assistant_item(
        self, client: httpx.AsyncClient
    ) -> None:
        await create_session(client, id="s", settings={"keep_recent": 1})
        await append(client, "s", user("one " * 50), assistant("two " * 50), user("three"))
        folded = await client.post("/sessions/s/summarize")
        assert folded.status_code == 200 and folded.json()["folded"], folded.text
        body = await context(client, "s", format="openai_responses", summary_placement="messages")
        first, ack = body["messages"][:2]
        assert first["role"] == "user" and first["type"] == "message"
        assert first["content"][0]["text"].startswith("[Summary of earlier conversation]")
        assert ack == said("assistant", "Understood.")
        assert_official_items(body["messages"])


class TestStateless:
    async def test_assemble_context_takes_and_returns_items(
        self, client: httpx.AsyncClient
    ) -> None:
        response = await client.post(
            "/assemble-context",
            json={"messages": TURN, "format": "openai_responses", "system": "S"},
        )
        assert response.status_code == 200, response.text
        body = response.json()
        assert body["system"] == "S"
        assert body["messages"][1] == REASONING
        assert [i["type"] for i in body["messages"]].count("function_call") == 2

    async def test_dropped_names_every_posted_index_of_a_group(
        self, client: httpx.AsyncClient
    ) -> None:
        items = [said("user", "task"), *TURN[1:], said("user", "next " * 1000)]
        response = await client.post(
            "/assemble-context",
            json={
                "messages": items,
                "format": "openai_responses",
                "max_tokens": 1060,
                "pin_first_message": False,
                "keep_recent": 1,
            },
        )
        assert response.status_code == 200, response.text
        body = response.json()
        assert set(body["dropped"]) == {0, 1, 2, 3, 4, 5, 6}, body
        assert body["messages"] == [items[-1]]

    async def test_count_tokens_counts_items_as_stored(self, client: httpx.AsyncClient) -> None:
        await create_session(client, id="s")
        appended = await append(client, "s", *TURN)
        counted = await client.post("/count-tokens", json={"messages": TURN})
        assert counted.status_code == 200
        assert counted.json()["tokens"] == sum(m["token_count"] for m in appended)

    async def test_summarize_context_takes_items(self, client: httpx.AsyncClient) -> None:
        response = await client.post(
            "/summarize-context", json={"messages": TURN, "strategy": "rule"}
        )
        assert response.status_code == 200, response.text
        assert "opaque-blob" not in response.json()["summary"]

    async def test_stateless_validation(self, client: httpx.AsyncClient) -> None:
        response = await client.post(
            "/assemble-context", json={"messages": [said("user", "x"), output("c9", "y")]}
        )
        assert_error(response, 422, "unmatched_call_output")
