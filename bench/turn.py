"""Turn bench: what a chat or an agent run does before each generation, over HTTP.

`python -m bench.turn` (also part of `make bench`; `--skip-postgres` leaves PostgreSQL out).
A turn appends one message (`POST …/messages`) and reads the context to send
(`GET …/context?max_tokens=8000`), one after the other, as a client must. 1 and 8 clients each
drive a session of their own, turn after turn, against `foldwise serve` with one worker, on
SQLite and PostgreSQL, with the rule summarizer (the default without a key) and with the LLM
summarizer against a fake Messages API on loopback that answers after 2 s
(tests/support/fake_anthropic.py). Sessions start empty, so turns cross folds: a fold every
few dozen turns at this budget. Turns per second are a ratio of `/healthz` requests per second
measured in the same run on the same server (wrk, 32 connections); p50 and p99 are over every
turn, folds included. The clients are Python (httpx, one event loop): their own cost per turn is
in the figures, so the ratio is a lower bound of the server's. Then the first read of a
transcript posted whole: 1k, 10k and 100k messages appended in batches of 1,000, then one
`GET …/context`.
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

from bench import doc, wrk
from bench.servers import database, postgres_missing, serving
from tests.support.fake_anthropic import FakeAnthropic

BUDGET = 8000
SECONDS = 8.0
CLIENTS = (1, 8)
LLM_DELAY_S = 2.0
POSTED = (1_000, 10_000, 100_000)
BATCH = 1_000
TURN_TARGET, P99_TARGET_MS = 0.1, 50.0
FIRST_READ_TARGET_S, FIRST_READ_TARGET_SIZE = 0.5, 10_000


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


async def _drive(
    client: httpx.AsyncClient, session_id: str, until: float
) -> tuple[list[float], int]:
    """Turns on one session until `until`: each turn's milliseconds, and the fitted ones."""
    latencies, fitted, number = [], 0, 0
    while time.perf_counter() < until:
        started = time.perf_counter()
        appended = await client.post(
            f"/sessions/{session_id}/messages", json={"messages": [message(number)]}
        )
        appended.raise_for_status()
        read = await client.get(f"/sessions/{session_id}/context", params={"max_tokens": BUDGET})
        read.raise_for_status()
        latencies.append((time.perf_counter() - started) * 1000)
        fitted += any("fold of this session is running" in w for w in read.json()["warnings"])
        number += 1
    return latencies, fitted


async def turns(port: int, clients: int, seconds: float) -> Turns:
    limits = httpx.Limits(max_connections=clients, max_keepalive_connections=clients)
    async with httpx.AsyncClient(
        base_url=f"http://127.0.0.1:{port}", limits=limits, timeout=60
    ) as client:
        ids = [f"turn-{clients}-{i}-{time.monotonic_ns()}" for i in range(clients)]
        for session_id in ids:
            (await client.post("/sessions", json={"id": session_id})).raise_for_status()
        started = time.perf_counter()
        until = started + seconds
        runs = await asyncio.gather(*(_drive(client, sid, until) for sid in ids))
        elapsed = time.perf_counter() - started
        folds = 0
        for session_id in ids:
            summary = (await client.get(f"/sessions/{session_id}")).json()["summary"]
            folds += summary["version"] if summary else 0
    latencies = [ms for run, _ in runs for ms in run]
    return Turns(clients, len(latencies), elapsed, latencies, folds, sum(f for _, f in runs))


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
            with summarizer(kind) as env, serving(url, 1, env) as port:
                healthz = wrk.run(port, "/healthz", connections=32, seconds=3).rps
                for clients in CLIENTS:
                    measured = asyncio.run(turns(port, clients, SECONDS))
                    out["turns"][(kind, clients)] = (healthz, measured)
        with serving(url, 1) as port:
            for size in sizes:
                out["first"][size] = asyncio.run(first_read(port, size))
    return out


def section(results: dict[str, dict[str, Any]], targets: list[list[Any]] | None = None) -> str:
    """The Markdown of this bench; its targets are appended to `targets` when given."""
    rows = []
    for backend, out in results.items():
        for (kind, clients), (healthz, measured) in out["turns"].items():
            ratio = measured.per_second / healthz
            rows.append(
                [
                    backend,
                    kind,
                    clients,
                    measured.turns,
                    f"{measured.per_second:.0f}",
                    f"{healthz:.0f}",
                    f"{ratio:.3f}",
                    f"{measured.percentile(0.5):.1f}",
                    f"{measured.percentile(0.99):.1f}",
                    measured.folds,
                    measured.fitted,
                ]
            )
            if targets is not None:
                figure = f"turns/s ÷ healthz req/s, {backend}, {kind}, {clients} client(s)"
                targets.append(_target(figure, ratio, TURN_TARGET))
                if kind == "llm":
                    figure = f"turn p99 ms with a 2 s LLM, {backend}, {clients} client(s)"
                    targets.append(
                        _target(figure, measured.percentile(0.99), P99_TARGET_MS, at_most=True)
                    )
    header = ["backend", "summarizer", "clients", "turns", "turns/s", "healthz req/s"]
    header += ["turns ÷ healthz", "p50 ms", "p99 ms", "folds", "served fitted"]
    first = [
        [
            backend,
            f"{size:,}",
            f"{r['post_s']:.1f}",
            f"{r['first_s'] * 1000:.0f}",
            int(r["included"]),
            "yes" if r["fitted"] else "no",
        ]
        for backend, out in results.items()
        for size, r in out["first"].items()
    ]
    if targets is not None:
        for backend, out in results.items():
            if FIRST_READ_TARGET_SIZE in out["first"]:
                first_s = out["first"][FIRST_READ_TARGET_SIZE]["first_s"]
                figure = f"first read after posting 10k messages whole, {backend}, s"
                targets.append(_target(figure, first_s, FIRST_READ_TARGET_S, at_most=True))
    return doc.render(
        "turn.md.tmpl",
        seconds=f"{SECONDS:.0f}",
        budget=f"{BUDGET:,}",
        delay=f"{LLM_DELAY_S:.0f}",
        table=doc.table(header, rows, "lllrrrrrrrr"),
        first=doc.table(
            ["backend", "messages", "post s", "first read ms", "messages sent", "fitted"],
            first,
            "lrrrrl",
        ),
    )


def _target(figure: str, value: float, goal: float, at_most: bool = False) -> list[Any]:
    ok = value <= goal if at_most else value >= goal
    return [
        figure,
        f"{'≤' if at_most else '≥'} {goal}",
        f"{value:.3f}",
        "**met**" if ok else "**missed**",
    ]


def measure(skip_postgres: bool, sizes: tuple[int, ...] = POSTED) -> dict[str, dict[str, Any]]:
    wrk.require()
    backends = ["SQLite"] if skip_postgres or postgres_missing() else ["SQLite", "PostgreSQL"]
    return {backend: run_backend(backend, sizes) for backend in backends}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--skip-postgres", action="store_true")
    parser.add_argument("--max-posted", type=int, default=POSTED[-1])
    args = parser.parse_args(argv)
    sizes = tuple(size for size in POSTED if size <= args.max_posted)
    results = measure(args.skip_postgres, sizes)
    targets: list[list[Any]] = []
    text = section(results, targets)
    print(text)
    print(doc.table(["figure", "target", "measured", "verdict"], targets))
    doc.write(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

__all__ = ["measure", "section"]
