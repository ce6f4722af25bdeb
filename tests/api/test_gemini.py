"""Gemini contents on …/messages and the stateless routes, served with `format=gemini`
(docs/reference.md §Message shapes). SQLite and PostgreSQL."""

from __future__ import annotations

from typing import Any

import httpx

from tests.support.factories import assert_error, context, create_session, stored
from tests.support.official_types import assert_official_chat, assert_official_gemini

SIGNATURE = "c2lnbmF0dXJlIGJ5dGVz"
ASK = {"role": "user", "parts": [{"text": "Weather in Paris?"}]}
CALL = {
    "role": "model",
    "parts": [
        {
            "functionCall": {"name": "weather", "args": {"city": "Paris"}},
            "thoughtSignature": SIGNATURE,
        }
    ],
}
ANSWER = {
    "role": "user",
    "parts": [{"functionResponse": {"name": "weather", "response": {"output": "sunny"}}}],
}
REPLY = {"role": "model", "parts": [{"text": "It is sunny in Paris."}]}
TOOLS = [{"functionDeclarations": [{"name": "weather", "description": "Weather by city"}]}]


async def post(client: httpx.AsyncClient, session_id: str, *contents: Any) -> httpx.Response:
    return await client.post(f"/sessions/{session_id}/messages", json={"contents": list(contents)})


async def test_a_turn_posted_in_three_requests_comes_back_as_posted(
    client: httpx.AsyncClient,
) -> None:
    await create_session(client, id="g", model="gemini-2.5-flash", tools=TOOLS)
    assert (await post(client, "g", ASK, CALL)).status_code == 201
    # The response names no id: it answers the session's newest call of that name.
    assert (await post(client, "g", ANSWER)).status_code == 201
    assert (await post(client, "g", REPLY)).status_code == 201
    served = await context(client, "g", format="gemini")
    assert served["messages"] == [ASK, CALL, ANSWER, REPLY]
    assert served["tools"] == TOOLS
    assert_official_gemini(served["messages"], served["system"], served["tools"])
    rows = await stored(client, "g")
    call_id = rows[1]["content"][0]["id"]
    assert rows[2]["content"][0]["tool_use_id"] == call_id
    chat = await context(client, "g", format="openai")
    assert_official_chat(chat["messages"])
    assert chat["messages"][1]["tool_calls"][0]["id"] == call_id


async def test_contents_go_in_messages_too_mixed_with_other_shapes(
    client: httpx.AsyncClient,
) -> None:
    await create_session(client, id="m")
    body = {"messages": [ASK, CALL, ANSWER, {"role": "assistant", "content": "Sunny."}]}
    assert (await client.post("/sessions/m/messages", json=body)).status_code == 201
    served = await context(client, "m", format="gemini")
    assert served["messages"][-1] == {"role": "model", "parts": [{"text": "Sunny."}]}
    assert_official_gemini(served["messages"])


async def test_bad_contents_are_refused_and_nothing_is_stored(client: httpx.AsyncClient) -> None:
    await create_session(client, id="b")
    two_fields = {"role": "user", "parts": [{"text": "a", "fileData": {"fileUri": "x"}}]}
    error = assert_error(await post(client, "b", ASK, two_fields), 422, "invalid_item")
    assert error["details"]["path"] == "messages[1].parts[0]"
    orphan = {
        "role": "user",
        "parts": [{"functionResponse": {"name": "nope", "response": {}, "id": "c9"}}],
    }
    error = assert_error(await post(client, "b", orphan), 422, "unmatched_call_output")
    assert "c9" in error["message"]
    nameless = {"role": "user", "parts": [{"functionResponse": {"name": "x", "response": {}}}]}
    assert_error(await post(client, "b", nameless), 422, "unmatched_call_output")
    both = {"messages": [{"role": "user", "content": "hi"}], "contents": [ASK]}
    assert_error(await client.post("/sessions/b/messages", json=both), 422, "validation_error")
    not_gemini = {"contents": [{"role": "user", "content": "hi"}]}
    assert_error(
        await client.post("/sessions/b/messages", json=not_gemini), 422, "validation_error"
    )
    assert await stored(client, "b") == []


async def test_the_stateless_routes_take_contents(client: httpx.AsyncClient) -> None:
    body = {"contents": [ASK, CALL, ANSWER, REPLY], "format": "gemini", "tools": TOOLS}
    response = await client.post("/assemble-context", json=body)
    assert response.status_code == 200, response.text
    assembled = response.json()
    assert assembled["messages"] == [ASK, CALL, ANSWER, REPLY]
    assert assembled["messages_included"] == 4
    counted = await client.post(
        "/count-tokens", json={"contents": [ASK, CALL], "model": "gemini-2.5-flash"}
    )
    assert counted.status_code == 200 and counted.json()["tokens"] > 0
    assert counted.json()["exact"] is False
    summarized = await client.post("/summarize-context", json={"contents": [ASK, CALL, ANSWER]})
    assert summarized.status_code == 200 and "weather" in summarized.json()["summary"].lower()


async def test_parallel_results_posted_as_tool_messages_are_one_gemini_content(
    client: httpx.AsyncClient,
) -> None:
    await create_session(client, id="p")
    calls = [
        {"id": f"call_{n}", "type": "function", "function": {"name": "f", "arguments": "{}"}}
        for n in (1, 2)
    ]
    body = {
        "messages": [
            {"role": "user", "content": "go"},
            {"role": "assistant", "content": None, "tool_calls": calls},
            {"role": "tool", "tool_call_id": "call_1", "content": "one"},
            {"role": "tool", "tool_call_id": "call_2", "content": "two"},
        ]
    }
    assert (await client.post("/sessions/p/messages", json=body)).status_code == 201
    served = await context(client, "p", format="gemini", explain="true")
    answers = served["messages"][2]["parts"]
    assert [a["functionResponse"]["id"] for a in answers] == ["call_1", "call_2"]
    assert served["messages_included"] == 4
    assert {e["status"] for e in served["explain"]} == {"included"}
    assert_official_gemini(served["messages"])
