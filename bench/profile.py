"""`make bench-profile`: where one `GET /sessions/{id}/context` spends its time, per part.

The app runs in this process and is called as an ASGI application directly (no sockets, no
HTTP client), on the 1k folded session of `make bench`, SQLite and PostgreSQL, with the
response cache off (every request loads and assembles) and on (every request a hit).
The functions in PARTS are wrapped with a wall clock; a part whose function no longer exists
is shown as "–" (update PARTS when app/ moves). `--top N` also prints cProfile's top
functions of the cache-off path (the event-loop thread only).
"""

from __future__ import annotations

import argparse
import asyncio
import cProfile
import functools
import importlib
import pstats
import statistics
import sys
import time
from collections import defaultdict
from collections.abc import Callable
from typing import Any

from app.core.settings import Settings
from app.main import create_app
from bench import doc
from bench.seed import seed_folded_session
from bench.servers import database, postgres_missing

PATH, QUERY = "/sessions/bench-1000/context", b"format=anthropic"
ROUNDS = 5
# label → "module:attribute" of the function timed (the first part that exists is used).
PARTS = {
    "dependencies": "fastapi.routing:solve_dependencies",
    "service": "app.services.response_cache:serve_context",
    "stamp read": "app.repositories.context:served_state",
    "read transaction": "app.services.context:ContextAssembler._load",
    "rows → messages": "app.repositories.context_rows:DecodedMessages.__call__",
    "engine": "app.services.context:ContextAssembler._assemble",
    "served-record write": "app.repositories.context:ContextRepository.record_served",
    "response model": "app.services.context_response:context_response",
    "serialization": "app.services.response_cache:render",
}


class Clock:
    def __init__(self) -> None:
        self.ms: defaultdict[str, float] = defaultdict(float)
        self.installed: set[str] = set()

    def wrap(self, label: str, function: Callable[..., Any]) -> Callable[..., Any]:
        def add(started: float) -> None:
            self.ms[label] += (time.perf_counter() - started) * 1000

        async def timed_async(*args: Any, **kwargs: Any) -> Any:
            started = time.perf_counter()
            try:
                return await function(*args, **kwargs)
            finally:
                add(started)

        def timed(*args: Any, **kwargs: Any) -> Any:
            started = time.perf_counter()
            try:
                return function(*args, **kwargs)
            finally:
                add(started)

        is_async = asyncio.iscoroutinefunction(function)
        return functools.wraps(function)(timed_async if is_async else timed)

    def install(self) -> None:
        """Wrap each part where it is defined and wherever it was imported by name."""
        for label, target in PARTS.items():
            module_name, _, attribute = target.partition(":")
            owner_name, _, name = attribute.rpartition(".")
            try:
                owner: Any = importlib.import_module(module_name)
            except ImportError:
                continue
            owner = getattr(owner, owner_name, None) if owner_name else owner
            if (original := getattr(owner, name, None)) is None:
                continue
            wrapped = self.wrap(label, original)
            self.installed.add(label)
            for holder in [owner, *sys.modules.values()]:
                if getattr(holder, name, None) is original:
                    setattr(holder, name, wrapped)


async def _get(app: Any) -> None:
    """One GET straight through the ASGI interface."""
    scope = {"type": "http", "asgi": {"version": "3.0"}, "http_version": "1.1", "method": "GET",
             "scheme": "http", "path": PATH, "raw_path": PATH.encode(), "query_string": QUERY,
             "root_path": "", "headers": [(b"host", b"bench")], "client": ("127.0.0.1", 5000),
             "server": ("127.0.0.1", 80)}  # fmt: skip
    status = []

    async def receive() -> dict[str, Any]:
        return {"type": "http.request", "body": b"", "more_body": False}

    async def send(message: dict[str, Any]) -> None:
        if message["type"] == "http.response.start":
            status.append(message["status"])

    await app(scope, receive, send)
    if status != [200]:
        raise RuntimeError(f"GET {PATH} answered {status}")


async def _measure(url: str, cache_bytes: int, clock: Clock, requests: int) -> dict[str, float]:
    """ms per request, in total and per part: medians over ROUNDS rounds (a neighbour's burst of
    load lands in one round)."""
    app = create_app(Settings(_env_file=None, database_url=url, context_cache_bytes=cache_bytes))
    rounds = []
    async with app.router.lifespan_context(app):
        for _ in range(20):
            await _get(app)
        for _ in range(ROUNDS):
            clock.ms.clear()
            started = time.perf_counter()
            for _ in range(requests // ROUNDS):
                await _get(app)
            clock.ms["total"] = (time.perf_counter() - started) * 1000
            rounds.append({k: v * ROUNDS / requests for k, v in clock.ms.items()})
    return {key: statistics.median(r.get(key, 0.0) for r in rounds) for key in rounds[0]}


def profile(backend: str, clock: Clock, requests: int, top: int) -> dict[str, dict[str, float]]:
    out = {}
    with database(backend) as url:
        asyncio.run(seed_folded_session(url, "bench-1000", 1000))
        for name, cache_bytes in (("cache off", 0), ("cache on", 64 << 20)):
            out[name] = asyncio.run(_measure(url, cache_bytes, clock, requests))
        if top:
            profiler = cProfile.Profile()
            profiler.runcall(asyncio.run, _measure(url, 0, clock, requests))
            pstats.Stats(profiler).sort_stats("tottime").print_stats(top)
    return out


def breakdown(ms: dict[str, float]) -> dict[str, float]:
    """The parts of issue 11's table; `other` is routing, middleware, ASGI and glue."""
    parts = {
        "database": ms.get("stamp read", 0)
        + ms.get("read transaction", 0)
        - ms.get("rows → messages", 0)
        + ms.get("served-record write", 0),
        "dependency resolution": ms.get("dependencies", 0),
        "rows → engine messages": ms.get("rows → messages", 0),
        "engine (assemble)": ms.get("engine", 0),
        "response build + serialization": ms.get("response model", 0) + ms.get("serialization", 0),
    }
    parts["other (routing, middleware, ASGI, glue)"] = ms["total"] - sum(parts.values())
    return {**parts, "**total**": ms["total"]}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="bench.profile", description=__doc__)
    parser.add_argument("--requests", type=int, default=500)
    parser.add_argument("--top", type=int, default=0, help="also print cProfile's top N")
    args = parser.parse_args(argv)
    clock = Clock()
    clock.install()
    missing = [label for label in PARTS if label not in clock.installed]
    backends = ["SQLite"] + ([] if postgres_missing() else ["PostgreSQL"])
    columns = {
        f"{backend}, {case}": breakdown(ms)
        for backend in backends
        for case, ms in profile(backend, clock, args.requests, args.top).items()
    }
    rows = [
        [part, *(f"{figures[part]:.3f}" for figures in columns.values())]
        for part in next(iter(columns.values()))
    ]
    text = doc.render(
        "profile.md.tmpl",
        requests=args.requests,
        table=doc.table(["part, ms per request", *columns], rows, "l" + "r" * len(columns)),
        missing=", ".join(f"{label} (`{PARTS[label]}`)" for label in missing) or "none",
        date=doc.machine()["date"],
        commit=doc.machine()["commit"],
    )
    print(text)
    doc.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
