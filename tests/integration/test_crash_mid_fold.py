"""kill -9 a server while its summarizer call hangs: the old state survives intact, the lease
lapses, and the restarted service folds exactly once."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterator
from pathlib import Path

import httpx
import pytest

from tests.support.fake_anthropic import FakeAnthropic
from tests.support.servers import Server, transcript

BUDGET = 1500
LEASE_S = "2"


@pytest.fixture
def hanging_anthropic() -> Iterator[FakeAnthropic]:
    server = FakeAnthropic(script=["hang"]).start()
    yield server
    server.stop()


async def wait_until(condition: Callable[[], bool]) -> None:
    """Poll for up to 10 s (the fake server records requests on its own thread)."""
    for _ in range(200):
        if condition():
            return
        await asyncio.sleep(0.05)
    raise TimeoutError("condition not met within 10 s")


@pytest.mark.slow
async def test_crash_mid_fold_leaves_old_state_and_recovers(
    db_url: str, tmp_path: Path, hanging_anthropic: FakeAnthropic
) -> None:
    env = {
        "ANTHROPIC_API_KEY": "test",
        "ANTHROPIC_BASE_URL": hanging_anthropic.base_url,
        "FOLDWISE_STRATEGY": "llm",
        "FOLDWISE_FOLD_LEASE_S": LEASE_S,
        "FOLDWISE_SUMMARY_TIMEOUT_S": "5",
    }
    doomed = Server(db_url, tmp_path, **env)
    restarted = Server(db_url, tmp_path, **env)
    try:
        doomed.start()
        async with doomed.client() as client:
            assert (await client.post("/sessions", json={"id": "crash"})).status_code == 201
            body = {"messages": transcript(20)}
            assert (await client.post("/sessions/crash/messages", json=body)).status_code == 201
            before = (await client.get("/sessions/crash/messages?limit=1000")).json()
            pending = asyncio.create_task(
                client.get("/sessions/crash/context", params={"max_tokens": BUDGET})
            )
            await wait_until(lambda: len(hanging_anthropic.requests) == 1)
            doomed.kill()
            with pytest.raises(httpx.HTTPError):
                await pending

        restarted.start()
        async with restarted.client() as client:
            session = (await client.get("/sessions/crash")).json()
            assert session["summary"] is None and session["message_count"] == 40
            assert (await client.get("/sessions/crash/summaries")).json()["summaries"] == []
            after = (await client.get("/sessions/crash/messages?limit=1000")).json()
            assert after == before

            response = await client.get("/sessions/crash/context", params={"max_tokens": BUDGET})
            assert response.status_code == 200, response.text
            context = response.json()
            history = (await client.get("/sessions/crash/summaries")).json()["summaries"]
    finally:
        doomed.stop()
        restarted.stop()

    assert context["summarized"] is True and context["summary"]["version"] == 1
    assert context["summary"]["method"] == "llm"
    assert context["usage"]["total_tokens"] <= BUDGET
    assert [h["version"] for h in history] == [1]
    assert len(hanging_anthropic.requests) == 2  # the lost call, then the one that folded
