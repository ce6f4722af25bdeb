"""Two server processes, one over-budget session, many racing context requests: exactly one
fold (one summarizer call, one history row, version 1), on SQLite and PostgreSQL."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.support.servers import Server, SlowAnthropic, transcript

RACERS = 16
BUDGET = 1500


@pytest.fixture
def slow_anthropic() -> Iterator[SlowAnthropic]:
    server = SlowAnthropic().start()
    yield server
    server.stop()


@pytest.mark.slow
async def test_racing_requests_on_two_processes_fold_exactly_once(
    db_url: str, tmp_path: Path, slow_anthropic: SlowAnthropic
) -> None:
    env = {
        "ANTHROPIC_API_KEY": "test",
        "ANTHROPIC_BASE_URL": slow_anthropic.base_url,
        "FOLDWISE_STRATEGY": "llm",
    }
    servers = [Server(db_url, tmp_path, **env), Server(db_url, tmp_path, **env)]
    try:
        for server in servers:
            server.launch()
        for server in servers:
            server.wait_ready()
        async with servers[0].client() as first, servers[1].client() as second:
            assert (await first.post("/sessions", json={"id": "race"})).status_code == 201
            appended = await first.post(
                "/sessions/race/messages", json={"messages": transcript(20)}
            )
            assert appended.status_code == 201

            async def get_context(client: httpx.AsyncClient) -> httpx.Response:
                return await client.get("/sessions/race/context", params={"max_tokens": BUDGET})

            responses = await asyncio.gather(
                *(get_context(first if i % 2 else second) for i in range(RACERS))
            )
            history = (await first.get("/sessions/race/summaries")).json()["summaries"]
            session = (await second.get("/sessions/race")).json()
    finally:
        for server in servers:
            server.stop()

    assert all(r.status_code == 200 for r in responses), [r.text for r in responses]
    bodies = [r.json() for r in responses]
    assert all(b["usage"]["total_tokens"] <= b["usage"]["budget"] == BUDGET for b in bodies)
    assert {b["summary"]["version"] for b in bodies} == {1}
    assert sum(b["summarized"] for b in bodies) == 1
    assert len(slow_anthropic.requests) == 1
    assert [h["version"] for h in history] == [1]
    assert history[0]["method"] == "llm"
    assert session["summary"]["version"] == 1 and session["message_count"] == 40
