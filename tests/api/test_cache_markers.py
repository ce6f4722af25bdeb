"""Client `cache_control` markers on SQLite and PostgreSQL: invalid values and markers on
thinking blocks are 422 on input; at most four markers leave in any context, Foldwise's
breakpoints included, the client's oldest dropped with a warning."""

from __future__ import annotations

from typing import Any

import httpx
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.support.factories import assert_error, assistant, create_session, user
from tests.support.markers import count_markers

EPHEMERAL = {"type": "ephemeral"}
TOOL = {"name": "read_file", "description": "Read", "input_schema": {"type": "object"}}


def _marked(text: str, marker: Any = EPHEMERAL) -> dict[str, Any]:
    return {"role": "user", "content": [{"type": "text", "text": text, "cache_control": marker}]}


def _sent_markers(context: dict[str, Any]) -> int:
    return count_markers([context["system"], context["messages"], context["tools"]])


INVALID = ["yes", None, {"type": "persistent"}, {"type": "ephemeral", "ttl": "2h"}, {}]


class TestAtTheDoor:
    @pytest.mark.parametrize("marker", INVALID)
    async def test_an_invalid_marker_in_a_message_is_422(
        self, client: httpx.AsyncClient, marker: Any
    ) -> None:
        await create_session(client, id="s")
        response = await client.post(
            "/sessions/s/messages", json={"messages": [_marked("x", marker)]}
        )
        error = assert_error(response, 422, "validation_error")
        assert "cache_control" in error["message"]
        response = await client.post("/assemble-context", json={"messages": [_marked("x", marker)]})
        assert_error(response, 422, "validation_error")

    @pytest.mark.parametrize("marker", INVALID)
    async def test_an_invalid_marker_on_a_tool_is_422(
        self, client: httpx.AsyncClient, marker: Any
    ) -> None:
        tools = [{**TOOL, "cache_control": marker}]
        response = await client.post("/sessions", json={"id": "s", "tools": tools})
        assert_error(response, 422, "validation_error")

    @pytest.mark.parametrize("kind", ["thinking", "redacted_thinking"])
    async def test_a_marker_on_a_thinking_block_is_422(
        self, client: httpx.AsyncClient, kind: str
    ) -> None:
        await create_session(client, id="s")
        block = {"type": kind, "thinking": "hm", "data": "x", "signature": "s"}
        message = {
            "role": "assistant",
            "content": [{**block, "cache_control": EPHEMERAL}, {"type": "text", "text": "ok"}],
        }
        body = {"messages": [user("hi"), message]}
        response = await client.post("/sessions/s/messages", json=body)
        error = assert_error(response, 422, "validation_error")
        assert "cannot carry" in error["message"]

    @pytest.mark.parametrize("ttl", ["5m", "1h"])
    async def test_valid_markers_are_stored_as_posted(
        self, client: httpx.AsyncClient, ttl: str
    ) -> None:
        marker = {"type": "ephemeral", "ttl": ttl}
        await create_session(client, id="s", tools=[{**TOOL, "cache_control": marker}])
        response = await client.post(
            "/sessions/s/messages", json={"messages": [_marked("x", marker)]}
        )
        assert response.status_code == 201, response.text
        stored = (await client.get("/sessions/s/messages")).json()["messages"][0]
        assert stored["content"][0]["cache_control"] == marker


class TestInTheContext:
    async def test_six_client_markers_leave_as_four_newest_with_a_warning(
        self, client: httpx.AsyncClient
    ) -> None:
        await create_session(client, id="s", system_prompt="Be brief.")
        turns = [m for i in range(6) for m in (_marked(f"note {i}"), assistant(f"ok {i}"))]
        response = await client.post("/sessions/s/messages", json={"messages": turns})
        assert response.status_code == 201, response.text
        for fmt in ("anthropic", "raw"):
            context = (await client.get("/sessions/s/context", params={"format": fmt})).json()
            assert _sent_markers(context) == 4, fmt
            assert context["usage"]["cache"]["breakpoints"] == 0  # no slot left for ours
            assert any(
                "2 of the client's cache_control markers dropped" in w for w in context["warnings"]
            )
            kept = [
                m["content"][0]["text"] for m in context["messages"] if "cache_control" in str(m)
            ]
            assert kept == ["note 2", "note 3", "note 4", "note 5"], fmt

    async def test_client_and_foldwise_markers_share_the_four(
        self, client: httpx.AsyncClient
    ) -> None:
        tools = [{**TOOL, "cache_control": EPHEMERAL}]
        await create_session(client, id="s", system_prompt="Be brief.", tools=tools)
        body = {"messages": [_marked("a"), assistant("b"), user("c")]}
        assert (await client.post("/sessions/s/messages", json=body)).status_code == 201
        context = (await client.get("/sessions/s/context")).json()
        # tool + message from the client, then ours: the newest message and the system prompt.
        assert _sent_markers(context) == 4 and context["usage"]["cache"]["breakpoints"] == 2
        assert not context["warnings"]


@settings(
    max_examples=15,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    per_turn=st.lists(st.integers(0, 3), min_size=1, max_size=6),
    tool_markers=st.integers(0, 3),
    fmt=st.sampled_from(["anthropic", "raw", "openai_responses"]),
    summarize=st.sampled_from(["never", "force"]),
)
async def test_no_response_carries_more_than_four_markers(
    client: httpx.AsyncClient,
    per_turn: list[int],
    tool_markers: int,
    fmt: str,
    summarize: str,
) -> None:
    sid = f"p{abs(hash((tuple(per_turn), tool_markers, fmt, summarize))) % 10**12}"
    tools = [
        {**TOOL, "name": f"t{i}", **({"cache_control": EPHEMERAL} if i < tool_markers else {})}
        for i in range(3)
    ]
    response = await client.post(
        "/sessions", json={"id": sid, "system_prompt": "Be brief.", "tools": tools}
    )
    if response.status_code == 409:
        return  # the same example again
    turns = []
    for i, count in enumerate(per_turn):
        blocks = [
            {"type": "text", "text": f"turn {i} part {k}", "cache_control": EPHEMERAL}
            for k in range(count)
        ] or [{"type": "text", "text": f"turn {i}"}]
        turns += [{"role": "user", "content": blocks}, assistant(f"ok {i}")]
    assert (
        await client.post(f"/sessions/{sid}/messages", json={"messages": turns})
    ).status_code == 201
    params: dict[str, str | int] = {"format": fmt, "summarize": summarize, "keep_recent": 2}
    response = await client.get(f"/sessions/{sid}/context", params=params)
    assert response.status_code == 200, response.text
    assert _sent_markers(response.json()) <= 4
