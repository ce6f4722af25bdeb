"""Folds ahead of need (SPEC §12, app/services/background_folds.py): past `fold_ahead` × the
budget a fold starts beside the requests; no read waits for the summarizer unless it is over
the budget, and then at most `fold_hard_wait_s` after the fold started."""

from __future__ import annotations

import asyncio
import time
from types import SimpleNamespace
from typing import Any, cast

import httpx
import pytest

from app.core.deadline import check_deadline, deadline_after
from app.engine.fold_policy import LLM_FOLD_AHEAD, RULE_FOLD_WAIT_S, RULE_WAIT_SPAN_TOKENS
from app.main import create_app
from app.services.background_folds import BackgroundFolds, fold_policy
from app.services.folds import FoldCoordinator, FoldJob, FoldOutcome
from tests.support.apps import MakeClient, make_settings
from tests.support.factories import append, create_session, turns
from tests.support.fake_anthropic import FakeAnthropic
from tests.support.recording_summarizer import RecordingSummarizer

BUDGET = 2000
PENDING = "a fold of this session is running"


async def read(client: httpx.AsyncClient, **params: Any) -> dict[str, Any]:
    """GET the context; it must answer within 5 s whatever the summarizer does."""
    response = await asyncio.wait_for(
        client.get("/sessions/s/context", params={"max_tokens": BUDGET, **params}), 5
    )
    assert response.status_code == 200, response.text
    body: dict[str, Any] = response.json()
    assert body["usage"]["total_tokens"] <= body["usage"]["budget"]
    return body


async def preview_tokens(client: httpx.AsyncClient) -> int:
    body = await read(client, preview="true")
    return int(body["usage"]["estimated_tokens"])


async def fill_to(client: httpx.AsyncClient, share: float) -> None:
    """Append small turns until the verbatim context passes `share` of the budget."""
    number = 0
    while await preview_tokens(client) < share * BUDGET:
        await append(client, "s", *turns(1, start=number, words=12))
        number += 1
    assert await preview_tokens(client) < BUDGET  # still within the budget


async def fold_started(summarizer: RecordingSummarizer, count: int = 1) -> bool:
    """Whether `count` summaries were asked for within a second (a fold started beside the
    requests claims its lease first)."""
    for _ in range(50):
        if len(summarizer.calls) >= count:
            return len(summarizer.calls) == count
        await asyncio.sleep(0.02)
    return False


async def summary_version(client: httpx.AsyncClient, attempts: int = 100) -> int:
    """The session's summary version once a fold landed (bounded wait: 20 ms per attempt)."""
    for _ in range(attempts):
        await asyncio.sleep(0.02)
        summary = (await client.get("/sessions/s")).json()["summary"]
        if summary is not None:
            return int(summary["version"])
    return 0


@pytest.fixture
def slow() -> RecordingSummarizer:
    return RecordingSummarizer(gate=asyncio.Event())


async def session_client(
    make_client: MakeClient, db_url: str, slow: RecordingSummarizer, **settings: Any
) -> httpx.AsyncClient:
    values = {"fold_ahead": 0.9, "fold_hard_wait_s": 0.0, **settings}
    app = create_app(make_settings(db_url, **values), summarizer_factory=slow.factory)
    client = await make_client(app)
    await create_session(client, id="s")
    return client


class TestFoldsAheadOfNeed:
    async def test_a_read_past_the_soft_trigger_starts_a_fold_and_is_served_at_once(
        self, make_client: MakeClient, db_url: str, slow: RecordingSummarizer
    ) -> None:
        client = await session_client(make_client, db_url, slow)
        await fill_to(client, 0.9)
        body = await read(client)  # the summarizer is blocked: answered without it
        assert body["summary"] is None and not body["summarized"] and not body["warnings"]
        assert await fold_started(slow)
        await append(client, "s", *turns(1, start=99, words=5))
        await read(client)  # the fold is running: not started twice
        assert await fold_started(slow)
        assert slow.gate is not None
        slow.gate.set()
        assert await summary_version(client) == 1
        folded = await read(client)  # the summary takes over at once
        assert folded["summary"]["version"] == 1
        assert folded["usage"]["cache"]["reason"] == "fold"
        assert folded["usage"]["total_tokens"] <= 0.75 * BUDGET  # folded down to the target
        history = (await client.get("/sessions/s/summaries")).json()["summaries"]
        assert [h["stats"]["trigger"] for h in history] == ["ahead"]

    async def test_a_read_over_the_budget_is_fitted_with_a_warning_while_the_fold_runs(
        self, make_client: MakeClient, db_url: str, slow: RecordingSummarizer
    ) -> None:
        client = await session_client(make_client, db_url, slow)
        await fill_to(client, 0.9)
        await read(client)
        assert await fold_started(slow)
        await append(client, "s", *turns(6, start=50, words=30))  # now over the budget
        started = time.monotonic()
        body = await read(client)
        assert time.monotonic() - started < 1.0  # did not wait for the summarizer
        assert any(PENDING in warning for warning in body["warnings"])
        assert body["summary"] is None and body["messages_included"] < body["messages_total"]
        assert await fold_started(slow)  # the running fold was joined, not started again
        assert slow.gate is not None
        slow.gate.set()
        assert await summary_version(client) == 1
        assert (await read(client))["summary"]["version"] == 1

    async def test_a_read_over_the_budget_waits_at_most_fold_hard_wait_s(
        self, make_client: MakeClient, db_url: str, slow: RecordingSummarizer
    ) -> None:
        client = await session_client(make_client, db_url, slow, fold_hard_wait_s=0.4)
        await append(client, "s", *turns(20, words=60))  # over the budget at once
        started = time.monotonic()
        body = await read(client)
        waited = time.monotonic() - started
        assert 0.3 <= waited < 3.0
        assert any(PENDING in warning for warning in body["warnings"])
        # A later read does not wait again: the wait counts from the fold's start.
        started = time.monotonic()
        await read(client)
        assert time.monotonic() - started < 0.3
        assert slow.gate is not None
        slow.gate.set()
        assert await summary_version(client) == 1

    async def test_a_fold_that_lands_within_the_wait_is_served_by_the_waiting_read(
        self, make_client: MakeClient, db_url: str
    ) -> None:
        quick = RecordingSummarizer()
        client = await session_client(make_client, db_url, quick, fold_hard_wait_s=5.0)
        await append(client, "s", *turns(20, words=60))  # over the budget at once
        body = await read(client)
        assert body["summarized"] and body["summary"]["version"] == 1
        assert not body["warnings"]

    async def test_summarize_force_still_folds_in_the_request(
        self, make_client: MakeClient, db_url: str
    ) -> None:
        quick = RecordingSummarizer()
        client = await session_client(make_client, db_url, quick)
        await append(client, "s", *turns(8, words=12))
        body = await read(client, summarize="force")
        assert body["summarized"] and body["summary"]["version"] == 1


class TestDefaults:
    def test_a_rule_fold_starts_at_the_budget_and_is_waited_for_briefly(self, db_url: str) -> None:
        settings = make_settings(db_url, fold_ahead=None, fold_hard_wait_s=None)
        assert fold_policy(settings, None).ahead_share == 1.0
        assert fold_policy(settings, None).wait_s(5_000) == RULE_FOLD_WAIT_S
        assert (
            fold_policy(settings, None).wait_s(RULE_WAIT_SPAN_TOKENS + 1) == 0.0
        )  # a whole transcript

    def test_an_llm_fold_starts_ahead_and_is_never_waited_for(self, db_url: str) -> None:
        settings = make_settings(
            db_url, fold_ahead=None, fold_hard_wait_s=None, anthropic_api_key="sk-test"
        )
        assert fold_policy(settings, None).ahead_share == LLM_FOLD_AHEAD
        assert fold_policy(settings, "hybrid").wait_s(0) == 0.0
        assert (
            fold_policy(settings, "rule").ahead_share,
            fold_policy(settings, "rule").wait_s(0),
        ) == (1.0, 0.25)

    def test_the_settings_win(self, db_url: str) -> None:
        settings = make_settings(db_url, fold_ahead=0.7, fold_hard_wait_s=2.0)
        assert (fold_policy(settings, None).ahead_share, fold_policy(settings, None).wait_s(0)) == (
            0.7,
            2.0,
        )


async def test_with_a_slow_llm_no_turn_waits_and_its_summary_lands_later(
    make_client: MakeClient,
) -> None:
    """The real SDK against a fake Messages API answering after 1.5 s, default settings."""
    fake = FakeAnthropic(default="delay:1.5").start()
    try:
        client = await make_client(
            anthropic_api_key="sk-test",
            anthropic_base_url=fake.base_url,
            fold_ahead=None,
            fold_hard_wait_s=None,
        )
        await create_session(client, id="s")
        await fill_to(client, 0.9)
        slowest = 0.0
        for number in range(8):  # past the soft trigger, then over the budget
            await append(client, "s", *turns(1, start=100 + number, words=40))
            started = time.monotonic()
            body = await read(client)
            slowest = max(slowest, time.monotonic() - started)
        assert slowest < 1.0  # no read waited for the LLM (1.5 s)
        assert body["summary"] is None
        assert any(PENDING in warning for warning in body["warnings"])
        assert await summary_version(client, attempts=200) == 1
        landed = await read(client)
        assert landed["summary"]["method"] == "llm" and not landed["warnings"]
        assert len(fake.requests) == 1  # one fold, however many reads asked for it
    finally:
        fake.stop()


async def test_a_fold_started_by_a_request_outlives_the_request_deadline() -> None:
    """A fold beside the requests runs in a context of its own: the deadline of the request
    that started it (app/core/deadline.py) does not stop it."""

    class Coordinator:
        async def run(self, job: object) -> FoldOutcome:
            await asyncio.sleep(0.05)  # past the request's deadline
            check_deadline()
            return FoldOutcome("folded")

    folds = BackgroundFolds()
    job = cast(FoldJob, SimpleNamespace(session_pk=1, session_id="s"))
    with deadline_after(0.01):
        running, started = folds.start(job, cast(FoldCoordinator, Coordinator()))
    assert started
    assert (await running.task).status == "folded"
