"""CPU-heavy work never runs on the event loop's thread: it is recorded where it runs. Only a
context small enough to cost less than the hop to a thread (app/services/context.py,
INLINE_MAX_*) is assembled on the loop."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

import httpx
import pytest

from app.engine.assemble import assemble
from app.services.context import INLINE_MAX_MESSAGES, INLINE_MAX_TOKENS
from app.summarizers.rule import rule_summary
from app.tokens.counter import TiktokenCounter
from tests.support.factories import assistant, user


def _recording(calls: list[str], wrapped: Callable[..., Any]) -> Callable[..., Any]:
    def run(*args: Any, **kwargs: Any) -> Any:
        calls.append(threading.current_thread().name)
        return wrapped(*args, **kwargs)

    return run


@pytest.mark.parametrize("db_url", ["sqlite"], indirect=True)
async def test_assembly_counting_and_rule_folds_run_off_the_loop(
    client: httpx.AsyncClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    loop_thread = threading.current_thread().name
    where: dict[str, list[str]] = {"assemble": [], "count": [], "rule": []}
    monkeypatch.setattr("app.services.context.assemble", _recording(where["assemble"], assemble))
    monkeypatch.setattr(
        TiktokenCounter,
        "count_message",
        _recording(where["count"], TiktokenCounter.count_message),
    )
    # The summarizer's coroutine may run on the loop: its CPU work (rule_summary) may not.
    monkeypatch.setattr(
        "app.summarizers.rule.rule_summary", _recording(where["rule"], rule_summary)
    )

    assert (await client.post("/sessions", json={"id": "s"})).status_code == 201
    # Over the bound of the loop before the fold and after it (~200 tokens a message).
    count = 4 * INLINE_MAX_MESSAGES
    turns = [
        user("question " * 200) if i % 2 == 0 else assistant("answer " * 200) for i in range(count)
    ]
    assert (await client.post("/sessions/s/messages", json={"messages": turns})).status_code == 201
    budget = 2 * INLINE_MAX_TOKENS
    response = await client.get("/sessions/s/context", params={"max_tokens": budget})
    assert response.status_code == 200 and response.json()["summarized"] is True
    summarized = await client.post("/summarize-context", json={"messages": turns[:4]})
    assert summarized.status_code == 200

    for kind, threads in where.items():
        assert threads, f"{kind} never ran"
        assert loop_thread not in threads, f"{kind} ran on the event loop"


@pytest.mark.parametrize("db_url", ["sqlite"], indirect=True)
async def test_a_small_context_is_assembled_on_the_loop(
    client: httpx.AsyncClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    loop_thread = threading.current_thread().name
    threads: list[str] = []
    monkeypatch.setattr("app.services.context.assemble", _recording(threads, assemble))
    assert (await client.post("/sessions", json={"id": "s"})).status_code == 201
    turns = [user("question " * 20) if i % 2 == 0 else assistant("answer") for i in range(10)]
    assert (await client.post("/sessions/s/messages", json={"messages": turns})).status_code == 201
    assert (await client.get("/sessions/s/context")).status_code == 200
    assert threads == [loop_thread]
