"""Builders for request bodies and small HTTP helpers used across the API tests."""

from __future__ import annotations

from typing import Any

import httpx


def user(content: str | list[dict[str, Any]], **extra: Any) -> dict[str, Any]:
    return {"role": "user", "content": content, **extra}


def assistant(text: str, **extra: Any) -> dict[str, Any]:
    return {"role": "assistant", "content": text, **extra}


def tool_use(call_id: str, name: str = "read_file", **arguments: Any) -> dict[str, Any]:
    """An Anthropic assistant turn that calls one tool."""
    return {
        "role": "assistant",
        "content": [{"type": "tool_use", "id": call_id, "name": name, "input": arguments}],
    }


def tool_result(call_id: str, output: str) -> dict[str, Any]:
    """The Anthropic user turn answering `call_id`."""
    return {
        "role": "user",
        "content": [{"type": "tool_result", "tool_use_id": call_id, "content": output}],
    }


def openai_tool_call(call_id: str, name: str, arguments: str) -> dict[str, Any]:
    return {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {"id": call_id, "type": "function", "function": {"name": name, "arguments": arguments}}
        ],
    }


def openai_tool_result(call_id: str, output: str) -> dict[str, Any]:
    return {"role": "tool", "tool_call_id": call_id, "content": output}


async def create_session(client: httpx.AsyncClient, **fields: Any) -> dict[str, Any]:
    response = await client.post("/sessions", json=fields)
    assert response.status_code == 201, response.text
    body: dict[str, Any] = response.json()
    return body


async def append(
    client: httpx.AsyncClient, session_id: str, *messages: dict[str, Any]
) -> list[dict[str, Any]]:
    response = await client.post(f"/sessions/{session_id}/messages", json={"messages": messages})
    assert response.status_code == 201, response.text
    appended: list[dict[str, Any]] = response.json()["messages"]
    return appended


def assert_error(response: httpx.Response, status: int, code: str) -> dict[str, Any]:
    """The response is the error envelope (docs/reference.md §Errors) with this status and code."""
    assert response.status_code == status, response.text
    error: dict[str, Any] = response.json()["error"]
    assert error["code"] == code, error
    assert isinstance(error["message"], str) and error["message"]
    return error


def turns(count: int, start: int = 0, words: int = 60) -> list[dict[str, Any]]:
    """`count` user/assistant pairs of about `words` tokens each."""
    messages: list[dict[str, Any]] = []
    for i in range(start, start + count):
        messages.append(user(f"Question {i}: " + "detail " * words))
        messages.append(assistant(f"Answer {i}: " + "result " * words))
    return messages


async def context(client: httpx.AsyncClient, session_id: str, **params: Any) -> dict[str, Any]:
    response = await client.get(f"/sessions/{session_id}/context", params=params)
    assert response.status_code == 200, response.text
    body: dict[str, Any] = response.json()
    assert body["usage"]["total_tokens"] <= body["usage"]["budget"]
    return body


async def stored(client: httpx.AsyncClient, session_id: str) -> list[dict[str, Any]]:
    response = await client.get(f"/sessions/{session_id}/messages", params={"limit": 1000})
    assert response.status_code == 200
    messages: list[dict[str, Any]] = response.json()["messages"]
    return messages


def comparable(response: httpx.Response) -> Any:
    """The body, but for message ids (the summary's `through_id`, explain's `id`: one per
    world)."""
    body = response.json()
    if body.get("summary"):
        body["summary"].pop("through_id")
    for entry in body.get("explain") or []:
        if entry["status"] != "synthetic":
            entry.pop("id")
    return body
