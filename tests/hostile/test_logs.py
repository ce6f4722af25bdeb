"""No message content, summary, tool input or key reaches the log, whatever the level: SQL
parameters are never logged, and third-party loggers are held back (app/core/logging.py)."""

from __future__ import annotations

import json
import logging
import sys
import uuid
from pathlib import Path

import httpx
import pytest

from app.core.logging import ContentGuard, configure_logging
from app.main import create_app
from tests.support.apps import MakeClient, make_settings
from tests.support.factories import tool_result, tool_use, user
from tests.support.fake_anthropic import FakeAnthropic
from tests.support.servers import Server

SECRET = "sk_live_" + "4eC39HqLyjWDarjtT1zdp7dc"


async def test_debug_logging_shows_no_sql_parameters(
    db_url: str, make_client: MakeClient, caplog: pytest.LogCaptureFixture
) -> None:
    configure_logging("debug")
    try:
        client = await make_client(create_app(make_settings(db_url, log_level="debug")))
        with caplog.at_level(logging.DEBUG):
            assert (await client.post("/sessions", json={"id": "s"})).status_code == 201
            message = {"role": "user", "content": f"deploy with {SECRET}"}
            response = await client.post("/sessions/s/messages", json={"messages": [message]})
            assert response.status_code == 201
            assert (await client.get("/sessions/s/messages")).status_code == 200
        assert any("INSERT INTO messages" in r.getMessage() for r in caplog.records)
        leaks = [(r.name, r.getMessage()[:200]) for r in caplog.records if SECRET in r.getMessage()]
        assert not leaks, leaks
    finally:
        configure_logging("warning")


def _marker(kind: str) -> str:
    """A string found nowhere else: finding it in the log is a leak of `kind`."""
    return f"LEAK{kind.upper()}{uuid.uuid4().hex}"


def test_a_real_server_at_debug_logs_no_content_summary_tool_input_or_key(
    tmp_path: Path,
) -> None:
    markers = {
        kind: _marker(kind)
        for kind in ("message", "system", "tool_input", "tool_output", "summary", "key")
    }
    fake = FakeAnthropic(reply=lambda _request: f"Task progress: {markers['summary']}.").start()
    database = f"sqlite:///{tmp_path / 'logs.db'}"
    server = Server(
        database,
        tmp_path,
        FOLDWISE_LOG_LEVEL="debug",
        FOLDWISE_STRATEGY="llm",
        ANTHROPIC_API_KEY=markers["key"],
        ANTHROPIC_BASE_URL=fake.base_url,
        ANTHROPIC_LOG="debug",  # the SDK raising its own loggers to DEBUG changes nothing
    ).start()
    try:
        with httpx.Client(base_url=server.base_url, timeout=60) as client:
            session = {"id": "leaks", "system_prompt": f"You are {markers['system']}."}
            assert client.post("/sessions", json=session).status_code == 201
            turns = [
                user(f"please look at {markers['message']}"),
                tool_use("t1", path=markers["tool_input"]),
                tool_result("t1", f"contents: {markers['tool_output']}"),
                *(user(f"turn {i}: {markers['message']}") for i in range(8)),
            ]
            response = client.post("/sessions/leaks/messages", json={"messages": turns})
            assert response.status_code == 201, response.text
            response = client.get("/sessions/leaks/context", params={"summarize": "force"})
            assert response.status_code == 200, response.text
            context = client.get("/sessions/leaks/context").json()
            assert markers["summary"] in json.dumps(context)  # the LLM's summary is served
    finally:
        server.stop()
        fake.stop()
    # What the LLM was sent holds the transcript and the key: the markers were in flight.
    assert fake.requests and markers["message"] in json.dumps(fake.requests[0].body)
    assert markers["key"] in json.dumps(fake.requests[0].headers)
    log = server.log.read_text()
    assert "SELECT" in log  # debug logging was on: statements are there, nothing else
    leaks = {kind: marker for kind, marker in markers.items() if marker in log}
    assert not leaks, [line for line in log.splitlines() if any(m in line for m in leaks.values())]


async def test_sql_statements_only_at_debug(
    db_url: str, make_client: MakeClient, caplog: pytest.LogCaptureFixture
) -> None:
    configure_logging("info")
    try:
        client = await make_client(create_app(make_settings(db_url)))
        with caplog.at_level(logging.INFO):
            assert (await client.post("/sessions", json={"id": "s"})).status_code == 201
        assert not [r for r in caplog.records if r.name.startswith("sqlalchemy.engine")]
    finally:
        configure_logging("warning")


@pytest.mark.parametrize(
    ("name", "level", "passes"),
    [
        ("anthropic._base_client", logging.DEBUG, False),
        ("httpx", logging.INFO, False),
        ("httpcore2.http11", logging.DEBUG, False),
        ("aiosqlite", logging.DEBUG, False),
        ("asyncpg.protocol", logging.INFO, False),
        ("sqlalchemy.engine.Engine", logging.DEBUG, False),  # result rows
        ("sqlalchemy.engine.Engine", logging.INFO, True),  # statements (at debug only)
        ("anthropic", logging.WARNING, True),
        ("foldwise", logging.DEBUG, True),
        ("anthropicish", logging.DEBUG, True),  # a prefix is not a parent
    ],
)
def test_the_guard_holds_whatever_a_library_sets_its_level_to(
    name: str, level: int, passes: bool
) -> None:
    record = logging.LogRecord(name, level, __file__, 1, "body: %s", ("x",), None)
    assert ContentGuard().filter(record) is passes


def test_a_logged_exception_keeps_its_type_and_traceback_not_its_message() -> None:
    configure_logging("warning")
    (handler,) = [h for h in logging.getLogger().handlers if getattr(h, "_foldwise", False)]
    try:
        raise ValueError(f"input_value={SECRET}")
    except ValueError:
        record = logging.LogRecord("foldwise", logging.ERROR, __file__, 1, "boom", (), None)
        record.exc_info = sys.exc_info()
    assert handler.formatter is not None
    text = handler.formatter.format(record)
    assert "ValueError" in text and "test_logs.py" in text and SECRET not in text
