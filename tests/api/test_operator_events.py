"""One log line per prune step, fallback and refused request, with ids and numbers only
(app/core/logging.py `log_event`)."""

from __future__ import annotations

import logging
from typing import Any

import httpx
import pytest

from app.core.logging import EVENT_FIELDS
from app.main import create_app
from tests.support.apps import MakeClient, make_settings
from tests.support.factories import (
    append,
    context,
    create_session,
    tool_result,
    tool_use,
    turns,
    user,
)
from tests.support.recording_summarizer import RecordingSummarizer


def events(caplog: pytest.LogCaptureFixture, name: str) -> list[dict[str, Any]]:
    return [getattr(r, EVENT_FIELDS) for r in caplog.records if r.getMessage() == name]


async def test_a_prune_step_is_one_line_and_a_repeat_is_none(
    client: httpx.AsyncClient, caplog: pytest.LogCaptureFixture
) -> None:
    await create_session(client, id="s")
    bulky = [user("read it"), tool_use("t1", path="big.log"), tool_result("t1", "log\n" * 900)]
    await append(client, "s", *bulky, *turns(20))
    with caplog.at_level(logging.INFO, logger="foldwise.context"):
        first = await context(client, "s", max_tokens=4000, summarize="never")
        await context(client, "s", max_tokens=4000, summarize="never")  # nothing new pruned
    (prune,) = events(caplog, "prune")
    assert prune["session"] == "s" and prune["pruned"] >= 1 and prune["reason"] == "over budget"
    assert prune["tokens_before"] > 4000 >= prune["tokens_after"]
    assert prune["tokens_after"] == first["usage"]["estimated_tokens"]


async def test_a_fallback_is_one_warning_with_its_reason(
    client: httpx.AsyncClient, recorder: RecordingSummarizer, caplog: pytest.LogCaptureFixture
) -> None:
    recorder.methods = ["fallback"]
    await create_session(client, id="s")
    await append(client, "s", *turns(20))
    with caplog.at_level(logging.INFO, logger="foldwise.fold"):
        await context(client, "s", max_tokens=2000)
    assert events(caplog, "fallback") == [{"session": "s", "reason": "scripted fallback"}]
    (fold,) = events(caplog, "fold")
    assert fold["method"] == "fallback" and fold["version"] == 1


@pytest.mark.parametrize("access_log", [True, False])
async def test_refused_requests_are_logged_with_or_without_the_access_log(
    db_url: str, make_client: MakeClient, caplog: pytest.LogCaptureFixture, access_log: bool
) -> None:
    app = create_app(make_settings(db_url, access_log=access_log, api_keys="acme:k"))
    client = await make_client(app)
    client.headers["Authorization"] = "Bearer k"
    with caplog.at_level(logging.INFO, logger="foldwise.access"):
        await create_session(client, id="s")
        assert (await client.get("/sessions/nope")).status_code == 404
        assert (await client.post("/sessions", content=b"{")).status_code == 422
    refused = events(caplog, "refused")
    assert [(r["status"], r["code"], r["tenant"]) for r in refused] == [
        (404, "session_not_found", "acme"),
        (422, "validation_error", "acme"),
    ]
    assert refused[0]["route"] == "/sessions/{session_id}"
    served = events(caplog, "request")
    assert [(r["method"], r["route"], r["status"]) for r in served] == (
        [("POST", "/sessions", 201)] if access_log else []
    )
