"""A request past FOLDWISE_REQUEST_TIMEOUT_S stops its work, in whatever thread it runs.

The guard answers 503 at the deadline; the work it handed to a worker thread cannot be
cancelled, so it checks the deadline (app/core/deadline.py) in its long loops and stops.
"""

from __future__ import annotations

import asyncio
import importlib
import threading
from typing import Any

import httpx
import pytest

from app.core.deadline import check_deadline, deadline_after
from app.core.errors import RequestTimeout
from app.engine.truncate import truncate_text
from app.summarizers.rule import rule_summary
from tests.engine.strategies import FakeCounter, make_message
from tests.support.apps import MakeClient

COUNTER = FakeCounter()
# The module, not the `extract` function the package re-exports under the same name.
extract_module = importlib.import_module("app.summarizers.rule.extract")


class TestDeadline:
    def test_no_request_no_deadline(self) -> None:
        check_deadline()  # the CLI, tests and background work are never stopped

    def test_a_passed_deadline_stops_the_rule_summarizer(self) -> None:
        messages = [make_message(i, "user", f"Please fix bug {i} now", COUNTER) for i in range(9)]
        with deadline_after(-1), pytest.raises(RequestTimeout):
            rule_summary(messages, None, 200, COUNTER)

    def test_a_passed_deadline_stops_a_cut(self) -> None:
        with deadline_after(-1), pytest.raises(RequestTimeout):
            truncate_text("word " * 10_000, 100, COUNTER)

    async def test_worker_threads_see_the_deadline_of_their_request(self) -> None:
        messages = [make_message(1, "user", "Please fix the parser now", COUNTER)]
        with deadline_after(-1), pytest.raises(RequestTimeout):
            await asyncio.to_thread(rule_summary, messages, None, 200, COUNTER)
        assert await asyncio.to_thread(rule_summary, messages, None, 200, COUNTER)


@pytest.mark.parametrize("db_url", ["sqlite"], indirect=True)
async def test_a_summary_past_its_deadline_stops_in_its_thread(
    make_client: MakeClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    """503 at the deadline, and the summarizer's thread reads no further message after it."""
    visited: list[str] = []
    release = threading.Event()
    original = extract_module._visit

    def slow_visit(walker: Any, message: Any) -> None:
        visited.append(message.id)
        release.wait(0.05)  # each message takes a while: the whole fold would take ~10 s
        original(walker, message)

    monkeypatch.setattr(extract_module, "_visit", slow_visit)
    client: httpx.AsyncClient = await make_client(request_timeout_s=0.5)
    turns = [{"role": "user", "content": f"Please fix bug number {i} today"} for i in range(200)]
    response = await client.post("/summarize-context", json={"messages": turns, "strategy": "rule"})
    assert response.status_code == 503
    assert response.json()["error"]["code"] == "request_timeout"
    await asyncio.sleep(0.3)  # a thread still working would visit ~6 more messages by now
    seen = len(visited)
    await asyncio.sleep(0.3)
    assert len(visited) == seen < len(turns)
