"""What an operator reads from a real `foldwise serve` at the default level: one JSON line per
fold, clear, refused request and request, the same format for uvicorn's lines, no SQL and no
content (app/core/logging.py, app/core/metrics.py)."""

from __future__ import annotations

import json
import uuid
from pathlib import Path
from typing import Any

import httpx

from tests.support.factories import assistant, tool_result, tool_use, user
from tests.support.servers import Server

KEY = "operator-key-" + uuid.uuid4().hex
PLANTED = "PLANTED" + uuid.uuid4().hex


def _records(log: Path) -> list[dict[str, Any]]:
    lines = [line for line in log.read_text().splitlines() if line.strip()]
    return [json.loads(line) for line in lines]  # every line is one JSON object


def _turns(round_number: int) -> list[dict[str, Any]]:
    call = f"call_{round_number}"
    return [
        user(f"round {round_number}: {PLANTED} " + "please refactor the parser " * 20),
        tool_use(call, path=f"src/{PLANTED}.py"),
        tool_result(call, f"{PLANTED} " + "def parse(): pass\n" * 40),
        assistant(f"done with {PLANTED} " + "the parser now streams " * 20),
    ]


def test_an_info_run_logs_one_line_per_fold_clear_and_request_and_nothing_else(
    tmp_path: Path,
) -> None:
    server = Server(
        f"sqlite:///{tmp_path / 'ops.db'}",
        tmp_path,
        FOLDWISE_LOG_LEVEL="info",
        FOLDWISE_LOG_FORMAT="json",
        FOLDWISE_API_KEYS=f"ops:{KEY}",
        FOLDWISE_STRATEGY="rule",
    ).start()
    headers = {"Authorization": f"Bearer {KEY}"}
    try:
        with httpx.Client(base_url=server.base_url, headers=headers, timeout=60) as client:
            body = {"id": "ops", "system_prompt": f"You are {PLANTED}.", "settings": {}}
            assert client.post("/sessions", json=body).status_code == 201
            for round_number in range(6):
                posted = client.post(
                    "/sessions/ops/messages", json={"messages": _turns(round_number)}
                )
                assert posted.status_code == 201, posted.text
                context = client.get("/sessions/ops/context", params={"max_tokens": 1200})
                assert context.status_code == 200, context.text
            assert client.post("/sessions/ops/clear").status_code == 200
            assert client.get("/sessions/missing/context").status_code == 404
            assert httpx.get(f"{server.base_url}/sessions").status_code == 401
            history = client.get("/sessions/ops/summaries", params={"limit": 100}).json()
    finally:
        server.stop()
    records = _records(server.log)
    folds = [r for r in records if r["message"] == "fold"]
    methods = [s["method"] for s in history["summaries"]]
    assert len(folds) == methods.count("rule") >= 2
    for fold in folds:
        assert fold["session"] == "ops" and fold["reason"] == "threshold"
        assert fold["tokens_before"] > fold["tokens_after"] and fold["duration_ms"] >= 0
    assert sorted(f["version"] for f in folds) == sorted(
        s["version"] for s in history["summaries"] if s["method"] == "rule"
    )
    (clear,) = [r for r in records if r["message"] == "clear"]
    assert clear["session"] == "ops" and clear["tokens_after"] == 0
    refused = {(r["status"], r["code"], r["route"]) for r in records if r["message"] == "refused"}
    assert (404, "session_not_found", "/sessions/{session_id}/context") in refused
    assert (401, "unauthorized", "unmatched") in refused
    requests = [r for r in records if r["message"] == "request"]
    appends = [r for r in requests if r["route"] == "/sessions/{session_id}/messages"]
    assert len(appends) == 6 and all(r["tenant"] == "ops" and r["status"] == 201 for r in appends)
    assert {r["logger"] for r in records} >= {"uvicorn.error", "foldwise.access", "foldwise.fold"}
    text = server.log.read_text()
    assert "SELECT" not in text and "sqlalchemy" not in text
    assert PLANTED not in text and KEY not in text
