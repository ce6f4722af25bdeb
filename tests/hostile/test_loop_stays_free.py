"""The event loop stays free while the heaviest /summarize-context inputs are worked on.

A real `foldwise serve` on SQLite and PostgreSQL gets a body near the 8 MiB limit of each
hostile shape (runs of newlines, one unbroken token, unclosed harness tags, a long shell
command, a test log of near-duplicate lines), and `/healthz` is asked every few
milliseconds while it is in flight: every answer must come within LATENCY_S, so counting,
the rule summarizer and redaction all run off the loop.
"""

from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.support.servers import Server

LATENCY_S = 0.1
# Characters of each hostile text: with JSON escapes and framing, just under 8 MiB.
SIZE = 3_500_000

pytestmark = pytest.mark.slow


def _bash(command: str, output: str) -> list[dict[str, Any]]:
    call = {"type": "tool_use", "id": "t1", "name": "bash", "input": {"command": command}}
    result = {"type": "tool_result", "tool_use_id": "t1", "content": output, "is_error": True}
    return [
        {"role": "user", "content": "Fix the failing tests please"},
        {"role": "assistant", "content": [call]},
        {"role": "user", "content": [result]},
    ]


HOSTILE: dict[str, list[dict[str, Any]]] = {
    "newlines in a user turn": [{"role": "user", "content": "go\n" + "\n" * SIZE + "x"}],
    "blank lines in a user turn": [{"role": "user", "content": "go" + " \n" * (SIZE // 2)}],
    "unclosed harness tags": [{"role": "user", "content": "<system-reminder>" * (SIZE // 17)}],
    "one unbroken tool output": _bash("pytest", "e" * (2 * SIZE)),
    "one unbroken shell word": _bash("cat " + "e" * (2 * SIZE), "ok"),
    "newlines in a shell command": _bash("cat a\n" + "\n" * SIZE + "b", "ok"),
    "near-duplicate log lines": _bash(
        "pytest",
        "".join(f"FAILED tests/test_{i}.py::test - Error: 1 failed\n" for i in range(SIZE // 50)),
    ),
}


async def _slowest_health_check(server: Server, body: dict[str, Any]) -> tuple[float, int]:
    """(slowest /healthz answer while `body` was being summarized, its status)."""
    slowest = 0.0
    async with httpx.AsyncClient(base_url=server.base_url, timeout=120) as client:
        posted = asyncio.create_task(
            client.post(
                "/summarize-context",
                content=json.dumps(body),
                headers={"content-type": "application/json"},
            )
        )
        async with httpx.AsyncClient(base_url=server.base_url, timeout=10) as probe:
            while not posted.done():
                started = time.perf_counter()
                assert (await probe.get("/healthz")).status_code == 200
                slowest = max(slowest, time.perf_counter() - started)
                await asyncio.sleep(0.01)
        response = await posted
    return slowest, response.status_code


async def test_healthz_answers_while_hostile_summaries_run(db_url: str, tmp_path: Path) -> None:
    server = Server(db_url, tmp_path).start()
    try:
        bodies: list[tuple[str, dict[str, Any]]] = [
            (shape, {"messages": messages, "strategy": "rule"})
            for shape, messages in HOSTILE.items()
        ]
        summary = "Task: fix it\n" + "\n" * SIZE + "x"
        turn = [{"role": "user", "content": "go on"}]
        bodies.append(
            (
                "blank lines in a previous summary",
                {"messages": turn, "previous_summary": summary, "strategy": "rule"},
            )
        )
        for shape, body in bodies:
            slowest, status = await _slowest_health_check(server, body)
            if slowest >= LATENCY_S:
                # Once more: a loop blocked by the work is blocked every time, while a pause of
                # this shared machine's scheduler does not come back at the same place.
                slowest, status = await _slowest_health_check(server, body)
            assert status == 200, shape
            assert slowest < LATENCY_S, f"{shape}: /healthz took {slowest * 1000:.0f} ms"
    finally:
        server.stop()
