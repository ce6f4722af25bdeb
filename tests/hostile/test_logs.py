"""No message content reaches the log, whatever the level: SQL parameters are never logged."""

from __future__ import annotations

import logging

import pytest

from app.core.logging import configure_logging
from app.main import create_app
from tests.conftest import MakeClient, make_settings

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
