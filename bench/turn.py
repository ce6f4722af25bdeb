"""Turn bench: what a chat or an agent run does before each generation, over HTTP.

`python -m bench.turn` (also part of `make bench`; `--skip-postgres` leaves PostgreSQL out,
`--max-posted N` the larger transcripts posted whole). Append one message, read the context,
turn after turn; turns per second as a ratio of `/healthz` on the same server in the same run.
What is measured and how: bench/turn.md.tmpl, the text of its section in docs/benchmarks.md.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import time
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import httpx

from bench import harness
from bench.harness import Target, database, serving
from tests.support.fake_anthropic import FakeAnthropic

BUDGET = 8000
SECONDS = 8.0
CLIENTS = (1, 8)
LLM_DELAY_S = 2.0
POSTED = (1_000, 10_000, 100_000)
BATCH = 1_000
# A turn as two requests (append, then read) or one (POST …/turn); issue 36's targets.
SHAPES = {"two requests": 0.05, "one request": 0.1}
P99_TARGET_MS = 50.0
FIRST_READ_TARGET_S, FIRST_READ_TARGET_SIZE = 0.5, 10_000
REPEAT_TARGET = {"SQLite": 0.3, "PostgreSQL": 0.2}


@dataclass(frozen=True, slots=True)
class Turns:
    clients: int
    turns: int
    seconds: float
    latencies_ms: list[float]
    folds: int
    fitted: int  # turns served the fitted context while a fold ran

    @property
    def per_second(self) -> float:
        return self.turns / self.seconds

    def percentile(self, share: float) -> float:
        ordered = sorted(self.latencies_ms)
        return ordered[min(len(ordered) - 1, int(share * len(ordered)))]


def message(number: int) -> dict[str, Any]:
    """A chat message of 60–140 tokens, user and assistant in turn."""
    role = "user" if number % 2 == 0 else "assistant"
    words = " ".join(f"w{(number * 7 + i) % 97}" for i in range(40 + (number * 13) % 60))
    return {"role": role, "content": f"Turn {number}: {words}"}


async def _turn(
    client: httpx.AsyncClient, session_id: str, posted: dict[str, Any], shape: str
) -> dict[str, Any]:
    """One turn; the context it was answered."""
    if shape == "one request":
        body = {"messages": [posted], "context": {"max_tokens": BUDGET}}
        response = await client.post(f"/sessions/{session_id}/turn", json=body)
        context: dict[str, Any] = response.raise_for_status().json()["context"]
        return context
    appended = await client.post(f"/sessions/{session_id}/messages", json={"messages": [posted]})
    appended.raise_for_status()
    read = await client.get(f"/sessions/{session_id}/context", params={"max_tokens": BUDGET})
    return dict(read.raise_for_status().json())


async def _drive(
    client: httpx.AsyncClient, session_id: str, until: float, shape: str
) -> tuple[list[float], int]:
    """Turns on one session until `until`: each turn's milliseconds, and the fitted ones."""
    latencies, fitted, number = [], 0, 0
    while time.perf_counter() < until:
        started = time.perf_counter()
        context = await _turn(client, session_id, message(number), shape)
        latencies.append((time.perf_counter() - started) * 1000)
        fitted += any("fold of this session is running" in w for w in context["warnings"])
        number += 1
    return latencies, fitted


async def turns(port: int, clients: int, seconds: float, shape: str = "two requests") -> Turns:
    limits = httpx.Limits(max_connections=clients, max_keepalive_connections=clients)
    async with httpx.AsyncClient(
        base_url=f"http://127.0.0.1:{port}", limits=limits, timeout=60
    ) as client:
        ids = [f"turn-{clients}-{i}-{time.monotonic_ns()}" for i in range(clients)]
        for session_id in ids:
            (await client.post("/sessions", json={"id": session_id})).raise_for_status()
        started = time.perf_counter()
        until = started + seconds
        runs = await asyncio.gather(*(_drive(client, sid, until, shape) for sid in ids))
        elapsed = time.perf_counter() - started
        folds = 0
        for session_id in ids:
            summary = (await client.get(f"/sessions/{session_id}")).json()["summary"]
            folds += summary["version"] if summary else 0
    latencies = [ms for run, _ in runs for ms in run]
    return Turns(clients, len(latencies), elapsed, latencies, folds, sum(f for _, f in runs))


async def settled_session(port: int) -> str:
    """A session of 20 messages under the budget, read once: the next read is a cache hit."""
    async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{port}", timeout=60) as client:
        session_id = f"repeat-{time.monotonic_ns()}"
        (await client.post("/sessions", json={"id": session_id})).raise_for_status()
        messages = [message(n) for n in range(20)]
        posted = await client.post(f"/sessions/{session_id}/messages", json={"messages": messages})
        posted.raise_for_status()
        read = await client.get(f"/sessions/{session_id}/context", params={"max_tokens": BUDGET})
        read.raise_for_status()
    return session_id


async def first_read(port: int, size: int) -> dict[str, float]:
    """Post `size` messages in batches, then time the first context read."""
    async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{port}", timeout=300) as client:
        session_id = f"posted-{size}-{time.monotonic_ns()}"
        (await client.post("/sessions", json={"id": session_id})).raise_for_status()
        started = time.perf_counter()
        for start in range(0, size, BATCH):
            batch = [message(n) for n in range(start, min(size, start + BATCH))]
            posted = await client.post(f"/sessions/{session_id}/messages", json={"messages": batch})
            posted.raise_for_status()
        post_s = time.perf_counter() - started
        started = time.perf_counter()
        read = await client.get(f"/sessions/{session_id}/context", params={"max_tokens": BUDGET})
        read.raise_for_status()
        first_s = time.perf_counter() - started
        body = read.json()
    return {
        "post_s": post_s,
        "first_s": first_s,
        "fitted": float(any("fold of this session" in w for w in body["warnings"])),
        "included": float(body["messages_included"]),
    }


@contextlib.contextmanager
def summarizer(kind: str) -> Iterator[dict[str, str]]:
    """The server environment of a summarizer: the rule one, or the LLM behind a fake API."""
    if kind == "rule":
        yield {}
        return
    fake = FakeAnthropic(default=f"delay:{LLM_DELAY_S}").start()
    try:
        yield {"ANTHROPIC_API_KEY": "bench-key", "ANTHROPIC_BASE_URL": fake.base_url}
    finally:
        fake.stop()


def run_backend(backend: str, sizes: tuple[int, ...]) -> dict[str, Any]:
    out: dict[str, Any] = {"turns": {}, "first": {}}
    with database(backend) as url:
        for kind in ("rule", "llm"):
            with summarizer(kind) as env, serving(url, env) as port:
                healthz = harness.wrk_rps(port, "/healthz", connections=32, seconds=3)
                for shape in SHAPES:
                    for clients in CLIENTS:
                        measured = asyncio.run(turns(port, clients, SECONDS, shape))
                        out["turns"][(kind, shape, clients)] = (healthz, measured)
        with serving(url) as port:
            # The same read again, nothing changed: answered from the response cache. Measured
            # before the posted transcripts, whose folds would run beside wrk and skew the ratio
            # either way (from 0.46 to 2.64 in two runs of the same code).
            path = f"/sessions/{asyncio.run(settled_session(port))}/context?max_tokens={BUDGET}"
            healthz = harness.wrk_rps(port, "/healthz", connections=32, seconds=3)
            out["repeat"] = harness.wrk_rps(port, path, connections=32, seconds=3) / healthz
            for size in sizes:
                out["first"][size] = asyncio.run(first_read(port, size))
    return out


def targets(results: dict[str, dict[str, Any]]) -> list[Target]:
    out = []
    for backend, result in results.items():
        for (kind, shape, clients), (healthz, measured) in result["turns"].items():
            figure = f"turns/s ÷ healthz req/s, {backend}, {kind}, {shape}, {clients} client(s)"
            out.append(Target(figure, measured.per_second / healthz, SHAPES[shape]))
            if kind == "llm":
                figure = f"turn p99 ms with a 2 s LLM, {backend}, {shape}, {clients} client(s)"
                out.append(Target(figure, measured.percentile(0.99), P99_TARGET_MS, True))
        figure = f"repeated context read ÷ healthz req/s, {backend}"
        out.append(Target(figure, result["repeat"], REPEAT_TARGET[backend]))
        if first := result["first"].get(FIRST_READ_TARGET_SIZE):
            figure = f"first read after posting 10k messages whole, {backend}, s"
            out.append(Target(figure, first["first_s"], FIRST_READ_TARGET_S, True))
    return out


def section(results: dict[str, dict[str, Any]]) -> str:
    rows = []
    for backend, result in results.items():
        for (kind, shape, clients), (healthz, measured) in result["turns"].items():
            rows.append([backend, kind, shape, clients, measured.turns])
            rows[-1] += [f"{measured.per_second:.0f}"]
            rows[-1] += [f"{healthz:.0f}", f"{measured.per_second / healthz:.3f}"]
            rows[-1] += [f"{measured.percentile(p):.1f}" for p in (0.5, 0.99)]
            rows[-1] += [measured.folds, measured.fitted]
    header = ["backend", "summarizer", "turn", "clients", "turns", "turns/s", "healthz req/s"]
    header += ["turns ÷ healthz", "p50 ms", "p99 ms", "folds", "served fitted"]
    first = []
    for backend, result in results.items():
        for size, r in result["first"].items():
            first.append([backend, f"{size:,}", f"{r['post_s']:.1f}", f"{r['first_s'] * 1000:.0f}"])
            first[-1] += [int(r["included"]), "yes" if r["fitted"] else "no"]
    first_header = ["backend", "messages", "post s", "first read ms", "messages sent", "fitted"]
    return harness.render(
        "turn.md.tmpl",
        seconds=f"{SECONDS:.0f}",
        budget=f"{BUDGET:,}",
        delay=f"{LLM_DELAY_S:.0f}",
        table=harness.table(header, rows, "llllrrrrrrrr"),
        first=harness.table(first_header, first, "lrrrrl"),
        repeat=", ".join(f"{b} {r['repeat']:.2f}" for b, r in results.items()),
    )


def measure(skip_postgres: bool, sizes: tuple[int, ...] = POSTED) -> dict[str, dict[str, Any]]:
    harness.require_wrk()
    return {backend: run_backend(backend, sizes) for backend in harness.backends(skip_postgres)}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--skip-postgres", action="store_true")
    parser.add_argument("--max-posted", type=int, default=POSTED[-1])
    args = parser.parse_args(argv)
    results = measure(args.skip_postgres, tuple(s for s in POSTED if s <= args.max_posted))
    harness.publish(section(results), targets(results))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
