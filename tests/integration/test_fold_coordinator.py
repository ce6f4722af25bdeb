"""The fold coordinator on a real database: lease, compare-and-swap, waiting, failure."""

from __future__ import annotations

import asyncio
import logging
from datetime import timedelta

import httpx
import pytest
from fastapi import FastAPI
from sqlalchemy import func, select
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from app.core.db import session_scope
from app.core.logging import EVENT_FIELDS
from app.engine.types import Message
from app.main import create_app
from app.models import Session, Summary
from app.models.base import utcnow
from app.repositories.folds import FoldRepository, NewSummary
from app.services.folds import FoldCoordinator, FoldJob
from app.summarizers.base import SummaryResult
from app.tokens.counter import counter_for
from tests.support.apps import MakeClient, make_settings
from tests.support.factories import append, create_session, turns, user
from tests.support.recording_summarizer import RecordingSummarizer

# Every summary of these folds: one token, so folding 5 of the job's 50 tokens leaves 46.
FOLDED = SummaryResult(text="folded", tokens=1, method="rule")


def slow(delay: float = 0.3, error: Exception | None = None) -> RecordingSummarizer:
    """A summarizer that takes `delay` seconds, then answers FOLDED (or raises `error`)."""
    return RecordingSummarizer(delay=delay, error=error, result=FOLDED)


@pytest.fixture
async def session_pk(client: httpx.AsyncClient, app: FastAPI) -> int:
    await create_session(client, id="s")
    await append(client, "s", *(user(f"m{i}") for i in range(4)))
    async with session_scope(app.state.sessionmaker) as db:
        pk = await db.scalar(select(Session.pk).where(Session.external_id == "s"))
    assert pk is not None
    return int(pk)


def job(pk: int, version: int = 0) -> FoldJob:
    message = Message(id="x", seq=3, role="user", content="m2", tokens=5)
    return FoldJob(
        session_pk=pk,
        session_id="s",
        version=version,
        previous_summary=None,
        previous_tokens=0,
        previous_message_count=0,
        messages=(message,),
        through_id="x",
        through_seq=3,
        trigger="threshold",
        strategy="rule",
        max_summary_tokens=100,
        tokens_before=50,
        messages_before=4,
    )


def coordinator(app: FastAPI, summarizer: RecordingSummarizer) -> FoldCoordinator:
    counter = counter_for(app.state.registry.get("claude-sonnet-4-5"))
    return FoldCoordinator(app.state.sessionmaker, app.state.settings, counter, summarizer.factory)


async def history_rows(factory: async_sessionmaker[AsyncSession], pk: int) -> int:
    async with session_scope(factory) as db:
        count = await db.scalar(select(func.count()).where(Summary.session_id == pk))
    return int(count or 0)


class TestLease:
    async def test_one_claim_per_version_until_the_lease_lapses(
        self, app: FastAPI, session_pk: int
    ) -> None:
        now = utcnow()
        async with session_scope(app.state.sessionmaker) as db:
            folds = FoldRepository(db)
            until = now + timedelta(seconds=60)
            claim = await folds.claim_lease(session_pk, version=0, owner="a", now=now, until=until)
            assert claim == "claimed"
            assert not await folds.claim_lease(
                session_pk, version=0, owner="b", now=now, until=until
            )
            later = until + timedelta(seconds=1)
            claim = await folds.claim_lease(
                session_pk, version=0, owner="b", now=later, until=later
            )
            assert claim == "taken_over"

    async def test_swap_fails_after_the_version_moved(self, app: FastAPI, session_pk: int) -> None:
        now = utcnow()
        new = NewSummary(text="t", through_id="x", through_seq=3, message_count=2, tokens=1,
                         method="rule")  # fmt: skip
        async with session_scope(app.state.sessionmaker) as db:
            folds = FoldRepository(db)
            until = now + timedelta(seconds=60)
            assert await folds.claim_lease(session_pk, version=0, owner="a", now=now, until=until)
            await folds.clear(session_pk, last_seq=4, through_id=None)  # version 0 → 1
            assert not await folds.swap_summary(session_pk, version=0, owner="a", new=new)
        assert await history_rows(app.state.sessionmaker, session_pk) == 1  # the clear only


class TestCoordinator:
    async def test_racing_coordinators_fold_once(self, app: FastAPI, session_pk: int) -> None:
        summarizer = slow()
        outcomes = await asyncio.gather(
            *(coordinator(app, summarizer).run(job(session_pk)) for _ in range(5))
        )
        assert sorted(o.status for o in outcomes) == ["folded"] + ["waited"] * 4
        assert len(summarizer.calls) == 1
        assert await history_rows(app.state.sessionmaker, session_pk) == 1
        async with session_scope(app.state.sessionmaker) as db:
            row = await db.get(Session, session_pk)
            assert row is not None
            assert (row.summary_version, row.summary_through_seq) == (1, 3)
            assert row.fold_lease_owner is None and row.fold_lease_until is None

    async def test_a_failing_summarizer_releases_the_lease(
        self, app: FastAPI, session_pk: int
    ) -> None:
        failing = slow(0, RuntimeError("summarizer exploded"))
        with pytest.raises(RuntimeError):
            await coordinator(app, failing).run(job(session_pk))
        outcome = await coordinator(app, slow(0)).run(job(session_pk))
        assert outcome.status == "folded"
        assert outcome.stats["messages_folded"] == 1 and outcome.stats["tokens_after"] == 46

    async def test_taking_over_a_lapsed_lease_is_one_log_line(
        self, app: FastAPI, session_pk: int, caplog: pytest.LogCaptureFixture
    ) -> None:
        async with session_scope(app.state.sessionmaker) as db:  # a worker that crashed
            lapsed = utcnow() - timedelta(seconds=1)
            await FoldRepository(db).claim_lease(
                session_pk, version=0, owner="crashed", now=lapsed, until=lapsed
            )
        with caplog.at_level(logging.INFO, logger="foldwise.fold"):
            outcome = await coordinator(app, slow(0)).run(job(session_pk))
        assert outcome.status == "folded"
        events = [(r.getMessage(), getattr(r, EVENT_FIELDS)) for r in caplog.records]
        assert [name for name, _ in events] == ["lease_takeover", "fold"]
        assert events[0][1]["session"] == "s" and events[0][1]["version"] == 0
        assert events[1][1] | {"duration_ms": 0} == {
            "session": "s", "version": 1, "reason": "threshold", "method": "rule",
            "messages_folded": 1, "tokens_before": 50, "tokens_after": 46, "duration_ms": 0,
        }  # fmt: skip

    async def test_a_stale_plan_is_not_written(self, app: FastAPI, session_pk: int) -> None:
        first = await coordinator(app, slow(0)).run(job(session_pk))
        stale = await coordinator(app, slow(0)).run(job(session_pk, version=0))
        assert (first.status, stale.status) == ("folded", "waited")
        assert await history_rows(app.state.sessionmaker, session_pk) == 1


class TestLeaseRenewal:
    async def test_a_fold_longer_than_its_lease_keeps_it(
        self, db_url: str, make_client: MakeClient
    ) -> None:
        # Lease 1 s, fold 3 s: without renewal a second worker would take over and pay for
        # a second summarizer call; with it the second one waits its bound, then gives up.
        app = create_app(make_settings(db_url, fold_lease_s=1.0, fold_wait_s=1.5))
        client = await make_client(app)
        await create_session(client, id="s")
        await append(client, "s", *(user(f"m{i}") for i in range(4)))
        async with session_scope(app.state.sessionmaker) as db:
            pk = int(await db.scalar(select(Session.pk).where(Session.external_id == "s")) or 0)
        summarizer = slow(3.0)

        async def late() -> str:
            await asyncio.sleep(0.5)
            return (await coordinator(app, summarizer).run(job(pk))).status

        first, second = await asyncio.gather(coordinator(app, summarizer).run(job(pk)), late())
        assert (first.status, second) == ("folded", "busy")
        assert len(summarizer.calls) == 1
        assert await history_rows(app.state.sessionmaker, pk) == 1


class TestStuckLease:
    async def test_a_live_foreign_lease_serves_the_fitted_fallback(
        self, db_url: str, make_client: MakeClient
    ) -> None:
        summarizer = RecordingSummarizer()
        app = create_app(
            make_settings(db_url, fold_wait_s=0.2), summarizer_factory=summarizer.factory
        )
        client = await make_client(app)
        await create_session(client, id="s")
        await append(client, "s", *turns(20))
        async with session_scope(app.state.sessionmaker) as db:
            pk = await db.scalar(select(Session.pk).where(Session.external_id == "s"))
            assert pk is not None
            until = utcnow() + timedelta(minutes=5)
            assert await FoldRepository(db).claim_lease(
                pk, version=0, owner="stuck-worker", now=utcnow(), until=until
            )
        response = await client.get("/sessions/s/context", params={"max_tokens": 1500})
        assert response.status_code == 200, response.text
        body = response.json()
        assert body["summarized"] is False and body["summary"] is None
        assert body["usage"]["total_tokens"] <= 1500
        assert summarizer.calls == []
        assert any("left out" in warning for warning in body["warnings"])
        assert any("another request is folding" in warning for warning in body["warnings"])
