"""Retention: the sweep deletes exactly the sessions idle past their retention (their own
`settings.retention_days`, else FOLDWISE_RETENTION_DAYS), in bounded batches, each session
once however many sweeps run at once; it counts and logs every sweep."""

from __future__ import annotations

import asyncio
import logging
from datetime import datetime, timedelta
from typing import Any

import httpx
import pytest
from fastapi import FastAPI
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st
from sqlalchemy import func, insert, select

from app.core.metrics import RETENTION_DELETED, RETENTION_SWEEPS
from app.main import create_app
from app.models import Calibration, Message, Session, SummaryCacheEntry
from app.models.base import utcnow
from app.services.retention import sweep
from tests.support.apps import MakeClient, make_settings
from tests.support.factories import assert_error, create_session
from tests.support.session_builder import build_session, idle_since

NOW = datetime(2030, 6, 1, 12, 0, tzinfo=utcnow().tzinfo)


async def session_ids(app: FastAPI) -> set[str]:
    async with app.state.engine.connect() as connection:
        return set((await connection.execute(select(Session.external_id))).scalars())


async def count(app: FastAPI, table: Any) -> int:
    async with app.state.engine.connect() as connection:
        return int((await connection.execute(select(func.count()).select_from(table))).scalar())


async def served(
    make_client: MakeClient, db_url: str, **overrides: Any
) -> tuple[FastAPI, httpx.AsyncClient]:
    app = create_app(make_settings(db_url, retention_sweep_s=0, **overrides))
    return app, await make_client(app)


# A session: hours idle (plus half an hour, so never exactly on a day boundary) and its own
# retention_days (None: the service default).
SESSION = st.tuples(st.integers(0, 24 * 40), st.none() | st.integers(0, 30))


@settings(
    max_examples=15,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
    phases=(Phase.explicit, Phase.reuse, Phase.generate),
)
@given(default_days=st.integers(0, 30), sessions=st.lists(SESSION, min_size=1, max_size=8))
async def test_deletes_exactly_the_sessions_idle_past_their_retention(
    make_client: MakeClient, db_url: str, default_days: int, sessions: list[tuple[int, int | None]]
) -> None:
    app, client = await served(make_client, db_url, retention_days=default_days)
    for sid in await session_ids(app):
        await client.delete(f"/sessions/{sid}")
    expected = set()
    for number, (hours, own) in enumerate(sessions):
        sid = f"s{number}"
        body: dict[str, Any] = {"id": sid}
        if own is not None:
            body["settings"] = {"retention_days": own}
        await create_session(client, **body)
        idle = timedelta(hours=hours, minutes=30)
        await idle_since(app, sid, NOW - idle)
        days = default_days if own is None else own
        if not (days > 0 and idle > timedelta(days=days)):
            expected.add(sid)
    result = await sweep(app.state.sessionmaker, app.state.settings, now=NOW)
    assert await session_ids(app) == expected
    assert result.sessions == len(sessions) - len(expected)


class TestSweep:
    async def test_concurrent_sweeps_delete_each_session_once(
        self, make_client: MakeClient, db_url: str
    ) -> None:
        app, client = await served(make_client, db_url, retention_days=7, retention_batch=3)
        for number in range(20):
            await build_session(client, f"old-{number}", [("chat", 1)])
            await idle_since(app, f"old-{number}", NOW - timedelta(days=8))
        for number in range(3):
            await build_session(client, f"new-{number}", [("chat", 1)])
            await idle_since(app, f"new-{number}", NOW - timedelta(days=6))
        sweepers = [create_app(app.state.settings) for _ in range(4)]
        for other in sweepers:
            await make_client(other)  # started: its own engine and connections
        results = await asyncio.gather(
            *(sweep(other.state.sessionmaker, other.state.settings, now=NOW) for other in sweepers)
        )
        assert sum(r.sessions for r in results) == 20
        assert sum(r.messages for r in results) == 20 * 3  # the task, a question, an answer
        assert await session_ids(app) == {f"new-{n}" for n in range(3)}
        assert await count(app, Message) == 3 * 3

    async def test_an_append_inside_the_window_keeps_the_session(
        self, make_client: MakeClient, db_url: str
    ) -> None:
        app, client = await served(make_client, db_url, retention_days=30)
        await build_session(client, "active", [("chat", 1)])
        await idle_since(app, "active", utcnow() - timedelta(days=31))
        await client.post(
            "/sessions/active/messages",
            json={"messages": [{"role": "user", "content": "still here"}]},
        )
        await sweep(app.state.sessionmaker, app.state.settings)
        assert "active" in await session_ids(app)

    async def test_counts_and_logs_each_sweep(
        self, make_client: MakeClient, db_url: str, caplog: pytest.LogCaptureFixture
    ) -> None:
        app, client = await served(make_client, db_url, retention_days=1)
        await build_session(client, "gone", [("chat", 2)])
        await idle_since(app, "gone", NOW - timedelta(days=2))
        sweeps = RETENTION_SWEEPS.labels("ok")._value.get()
        deleted = RETENTION_DELETED.labels("messages")._value.get()
        with caplog.at_level(logging.INFO, logger="foldwise.retention"):
            await sweep(app.state.sessionmaker, app.state.settings, now=NOW)
        assert RETENTION_SWEEPS.labels("ok")._value.get() == sweeps + 1
        assert RETENTION_DELETED.labels("messages")._value.get() == deleted + 5
        lines = [r.getMessage() for r in caplog.records if r.name == "foldwise.retention"]
        assert lines == [lines[0]] and lines[0].startswith(
            "retention sweep: 1 sessions (5 messages)"
        )
        metrics = (await client.get("/metrics")).text
        assert "foldwise_retention_sweeps_total" in metrics

    async def test_ages_out_cache_and_calibration_rows_with_the_default(
        self, make_client: MakeClient, db_url: str
    ) -> None:
        app, _ = await served(make_client, db_url, retention_days=10)
        async with app.state.engine.begin() as connection:
            for key, age in (("a" * 64, 11), ("b" * 64, 9)):
                created = NOW - timedelta(days=age)
                values = {
                    "key": key,
                    "text": "s",
                    "tokens": 1,
                    "method": "llm",
                    "created_at": created,
                }
                await connection.execute(insert(SummaryCacheEntry).values(values))
                calibration = {"tenant": key[0], "family": "anthropic", "updated_at": created}
                await connection.execute(insert(Calibration).values(calibration))
        result = await sweep(app.state.sessionmaker, app.state.settings, now=NOW)
        assert result.shared_rows == 2
        assert await count(app, SummaryCacheEntry) == 1 and await count(app, Calibration) == 1

    async def test_a_replica_sweeps_in_the_background(
        self, make_client: MakeClient, db_url: str
    ) -> None:
        app = create_app(make_settings(db_url, retention_days=1, retention_sweep_s=0.05))
        client = await make_client(app)
        await build_session(client, "stale", [])
        await idle_since(app, "stale", utcnow() - timedelta(days=2))
        for _ in range(100):
            if not await session_ids(app):
                break
            await asyncio.sleep(0.05)
        assert await session_ids(app) == set()


class TestRetentionSetting:
    async def test_is_a_session_setting_with_bounds(self, client: httpx.AsyncClient) -> None:
        created = await create_session(client, id="kept", settings={"retention_days": 0})
        assert created["settings"] == {"retention_days": 0}
        for bad in (-1, 3651, "7", 1.5):
            response = await client.patch(
                "/sessions/kept", json={"settings": {"retention_days": bad}}
            )
            assert_error(response, 422, "validation_error")
        dropped = await client.patch("/sessions/kept", json={"settings": {"retention_days": None}})
        assert dropped.json()["settings"] == {}

    async def test_is_not_a_context_query_key(self, client: httpx.AsyncClient) -> None:
        await create_session(client, id="q")
        response = await client.get("/sessions/q/context", params={"retention_days": 3})
        assert_error(response, 422, "unknown_query_parameter")
