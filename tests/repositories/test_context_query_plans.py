"""GET …/context stays flat in history length: every read of `messages` is an index range.

Latency benchmarks catch a full scan late and noisily; the query plan catches it at once.
SQLite only: its EXPLAIN QUERY PLAN says plainly whether an index bounds the scan.
"""

from __future__ import annotations

import shutil
import sqlite3
from pathlib import Path
from typing import Any

import pytest
from fastapi import FastAPI
from sqlalchemy import event

from app.main import create_app
from app.repositories.context_version import SQLITE_STATE, SqliteContextVersionReader
from tests.support.apps import MakeClient, make_settings
from tests.support.factories import (
    append,
    assert_error,
    create_session,
    tool_result,
    tool_use,
    user,
)


def _plans(db_file: Path, statements: list[tuple[str, Any]], table: str = "messages") -> list[str]:
    lines = []
    with sqlite3.connect(db_file) as connection:
        for sql, params in statements:
            if f"FROM {table}" in sql and sql.lstrip().upper().startswith("SELECT"):
                rows = connection.execute(f"EXPLAIN QUERY PLAN {sql}", params).fetchall()
                lines += [str(row[-1]) for row in rows]
    return lines


async def _traced(app: FastAPI, monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The statements the driver reads (app/repositories/context_version.py, context_rows.py)
    run from now on, with their parameters in place."""
    driver: list[str] = []
    reader = app.state.read_path.versions
    assert isinstance(reader, SqliteContextVersionReader)
    await reader.close()  # reconnected by the next read, traced
    connect = reader._connect

    def traced() -> sqlite3.Connection:
        connection = connect()
        connection.set_trace_callback(driver.append)
        return connection

    monkeypatch.setattr(reader, "_connect", traced)
    return driver


async def test_context_reads_messages_by_seq_range_only(
    sqlite_template: Path, tmp_path: Path, make_client: MakeClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    db_file = tmp_path / "plans.db"
    shutil.copyfile(sqlite_template, db_file)
    # The uncached path: the response cache would answer the second request.
    app = create_app(make_settings(f"sqlite:///{db_file}", context_cache_bytes=0))
    client = await make_client(app)
    await create_session(client, id="long")
    turns: list[dict[str, Any]] = [user("Refactor the billing module.")]
    for i in range(30):
        turns += [tool_use(f"c{i}", path=f"billing/m{i}.py"), tool_result(f"c{i}", "x = 1\n" * 80)]
    turns.append(user("What is left?"))
    await append(client, "long", *turns)
    first = await client.get("/sessions/long/context", params={"max_tokens": 1500})
    assert first.status_code == 200 and first.json()["summary"] is not None  # folded

    statements: list[tuple[str, Any]] = []

    def record(_conn: Any, _cursor: Any, sql: str, params: Any, *_: Any) -> None:
        statements.append((sql, params))

    event.listen(app.state.engine.sync_engine, "before_cursor_execute", record)
    driver = await _traced(app, monkeypatch)
    response = await client.get("/sessions/long/context", params={"max_tokens": 1500})
    assert response.status_code == 200
    statements += [(sql, ()) for sql in driver]
    plans = _plans(db_file, statements)
    message_reads = [p for p in plans if "messages" in p]
    assert message_reads, statements
    for plan in message_reads:
        assert "SCAN" not in plan, plan
        assert "seq" in plan, f"a read of messages not bounded by seq: {plan}"


async def test_a_cached_context_is_validated_by_index_lookups_only(
    sqlite_template: Path, tmp_path: Path, make_client: MakeClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    db_file = tmp_path / "plans.db"
    shutil.copyfile(sqlite_template, db_file)
    app = create_app(make_settings(f"sqlite:///{db_file}"))
    client = await make_client(app)
    await create_session(client, id="s")
    await append(client, "s", user("Refactor the billing module."))
    usage = await client.post("/sessions/s/usage", json={"input_tokens": 20})
    assert_error(usage, 409, "no_context_served")
    await client.get("/sessions/s/context")
    assert (await client.post("/sessions/s/usage", json={"input_tokens": 20})).status_code == 200
    await client.get("/sessions/s/context")  # the calibration changed: a miss, cached again

    statements: list[tuple[str, Any]] = []

    def record(_conn: Any, _cursor: Any, sql: str, params: Any, *_: Any) -> None:
        statements.append((sql, params))

    event.listen(app.state.engine.sync_engine, "before_cursor_execute", record)
    driver = await _traced(app, monkeypatch)
    response = await client.get("/sessions/s/context")
    assert response.status_code == 200
    assert app.state.read_path.responses.hits == 1
    assert statements == []  # nothing through the app's engine: one statement of the reader
    reads = [sql for sql in driver if not sql.startswith("PRAGMA")]
    assert len(reads) == 1 and reads[0].startswith(SQLITE_STATE.split(" = ?")[0]), reads
    params = ("anthropic", "default", "s")
    plans = _plans(db_file, [(SQLITE_STATE, params)], table="sessions")
    assert plans
    for plan in plans:
        assert "SCAN" not in plan, plan
