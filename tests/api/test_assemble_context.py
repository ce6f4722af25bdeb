"""POST /assemble-context: stateless pruning/dropping under the budget, nothing stored."""

from __future__ import annotations

from typing import Any

import httpx
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.support.factories import assert_error, tool_result, tool_use, turns, user


async def assemble(client: httpx.AsyncClient, **body: Any) -> dict[str, Any]:
    response = await client.post("/assemble-context", json=body)
    assert response.status_code == 200, response.text
    result: dict[str, Any] = response.json()
    assert result["usage"]["total_tokens"] <= result["usage"]["budget"]
    return result


class TestAssemble:
    async def test_under_budget_is_verbatim(self, client: httpx.AsyncClient) -> None:
        body = await assemble(client, messages=turns(2, words=5), system="S")
        marked = {"type": "text", "text": "S", "cache_control": {"type": "ephemeral"}}
        assert body["system"] == [marked] and len(body["messages"]) == 4
        assert body["pruned"] == [] and body["dropped"] == []
        assert body["messages_included"] == body["messages_total"] == 4
        assert body["usage"]["calibration"]["samples"] == 0
        assert "explain" not in body

    async def test_over_budget_drops_oldest_by_index(self, client: httpx.AsyncClient) -> None:
        body = await assemble(client, messages=turns(20), max_tokens=1200, explain=True)
        assert body["dropped"] and body["dropped"] == sorted(body["dropped"])
        assert 0 not in body["dropped"]  # the pinned first user message stays
        dropped = [int(e["id"]) for e in body["explain"] if e["status"] == "dropped"]
        assert dropped == body["dropped"]
        assert body["messages_included"] == 40 - len(body["dropped"])

    async def test_bulky_tool_output_is_pruned_before_dropping(
        self, client: httpx.AsyncClient
    ) -> None:
        messages = [
            user("read the log"),
            tool_use("t1", name="read_file", path="big.log"),
            tool_result("t1", "line of log output\n" * 800),
            *turns(4, words=5),
        ]
        body = await assemble(client, messages=messages, max_tokens=1500, keep_recent=2)
        assert body["pruned"] == [2] and body["dropped"] == []

    async def test_summary_and_openai_format(self, client: httpx.AsyncClient) -> None:
        body = await assemble(
            client, messages=turns(1, words=5), system="S", summary="Earlier: X.", format="openai"
        )
        assert body["system"] is None
        assert body["messages"][0]["role"] == "system"
        assert "Earlier: X." in body["messages"][0]["content"]
        assert body["usage"]["summary_tokens"] > 0

    async def test_invalid_message_and_tiny_budget(self, client: httpx.AsyncClient) -> None:
        bad = await client.post("/assemble-context", json={"messages": [{"role": "robot"}]})
        assert_error(bad, 422, "invalid_message")
        tiny = await client.post(
            "/assemble-context",
            json={"messages": [user("hi")], "system": "rules " * 100, "max_tokens": 20},
        )
        assert_error(tiny, 422, "budget_too_small")
        unknown = await client.post("/assemble-context", json={"messages": [], "extra": 1})
        assert_error(unknown, 422, "validation_error")


@settings(
    max_examples=25,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(
    budget=st.integers(min_value=40, max_value=3000),
    pairs=st.integers(min_value=1, max_value=12),
    words=st.integers(min_value=1, max_value=400),
    fmt=st.sampled_from(["anthropic", "openai", "raw"]),
)
async def test_never_over_budget(
    client: httpx.AsyncClient, budget: int, pairs: int, words: int, fmt: str
) -> None:
    response = await client.post(
        "/assemble-context",
        json={"messages": turns(pairs, words=words), "max_tokens": budget, "format": fmt},
    )
    if response.status_code == 422:  # only when not even a cut user message fits
        assert response.json()["error"]["code"] == "budget_too_small"
        return
    body = response.json()
    assert response.status_code == 200, body
    assert body["usage"]["total_tokens"] <= budget
    if fmt == "anthropic":
        assert body["messages"][0]["role"] == "user"
