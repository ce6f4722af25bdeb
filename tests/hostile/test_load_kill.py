"""Load with a crash: writers on two server processes, one killed -9 mid-run and restarted.
Every acknowledged or retried message is stored exactly once, seqs stay gap-free, and every
session still reads (SQLite and PostgreSQL)."""

from __future__ import annotations

import asyncio
import itertools
from pathlib import Path

import httpx
import pytest

from tests.support.servers import Server

WRITERS = 4
MESSAGES = 40  # per writer, one request each: 160 appends, plus the retries the kill causes
KILL_AFTER = 50  # acknowledged appends before server 0 is killed
MAX_TRIES = 50

pytestmark = pytest.mark.slow


async def _append(servers: list[Server], sid: str, body: dict[str, object]) -> None:
    """POST until acknowledged, switching server after every failure (a client's retry)."""
    for attempt in range(MAX_TRIES):
        server = servers[attempt % len(servers)]
        try:
            async with httpx.AsyncClient(base_url=server.base_url, timeout=30) as client:
                response = await client.post(f"/sessions/{sid}/messages", json=body)
            if response.status_code == 201:
                return
            assert response.status_code == 503, response.text  # busy: retry
        except httpx.TransportError:
            pass
        await asyncio.sleep(0.05)
    raise AssertionError(f"{sid}: not acknowledged after {MAX_TRIES} tries")


async def test_writers_survive_a_kill_9(db_url: str, tmp_path: Path) -> None:
    servers = [Server(db_url, tmp_path), Server(db_url, tmp_path)]
    acknowledged = 0
    killed = asyncio.Event()

    async def writer(index: int) -> None:
        nonlocal acknowledged
        sid = f"w{index}"
        order = itertools.cycle([servers[index % 2], servers[(index + 1) % 2]])
        for j in range(MESSAGES):
            role = "user" if j % 2 == 0 else "assistant"
            message = {"role": role, "content": f"{sid} message {j}", "client_id": f"{sid}-{j}"}
            first = next(order)
            preference = [first, *(s for s in servers if s is not first)]
            await _append(preference, sid, {"messages": [message]})
            acknowledged += 1
            if acknowledged == KILL_AFTER and not killed.is_set():
                killed.set()

    async def killer() -> None:
        await killed.wait()
        await asyncio.to_thread(servers[0].kill)
        await asyncio.to_thread(servers[0].start)  # the same port, a new process

    try:
        for server in servers:
            server.launch()
        for server in servers:
            server.wait_ready()
        async with httpx.AsyncClient(base_url=servers[1].base_url, timeout=30) as client:
            for index in range(WRITERS):
                response = await client.post("/sessions", json={"id": f"w{index}"})
                assert response.status_code == 201
        await asyncio.gather(killer(), *(writer(i) for i in range(WRITERS)))
        async with httpx.AsyncClient(base_url=servers[0].base_url, timeout=30) as client:
            for index in range(WRITERS):
                sid = f"w{index}"
                page = (await client.get(f"/sessions/{sid}/messages?limit=1000")).json()
                stored = page["messages"]
                assert [m["seq"] for m in stored] == list(range(1, MESSAGES + 1))
                assert [m["client_id"] for m in stored] == [f"{sid}-{j}" for j in range(MESSAGES)]
                context = await client.get(f"/sessions/{sid}/context")
                assert context.status_code == 200 and context.json()["messages_total"] == MESSAGES
    finally:
        for server in servers:
            server.stop()
