"""Where does a request's time go? Phase timings and a cProfile, in-process.

    .venv/bin/python -m bench.profile context --size 1000 --requests 200
    .venv/bin/python -m bench.profile context --backend postgresql
    .venv/bin/python -m bench.profile assemble --requests 5

The app runs in this process behind httpx's ASGI transport (no sockets, no server loop), on
a throw-away database seeded like the benchmark. First an unprofiled pass times the phases
of the request (the service methods below are wrapped with a wall clock; a phase that no
longer exists is skipped), then a profiled pass prints the top functions by own and by
cumulative time. cProfile sees only the event-loop thread: time spent waiting for the
database shows up as `select.epoll.poll`.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import cProfile
import functools
import importlib
import io
import pstats
import sys
import time
from collections import Counter, defaultdict
from collections.abc import Awaitable, Callable
from typing import Any

import httpx

from app.core.settings import Settings
from app.main import create_app
from bench.cases_assemble import assemble_body
from bench.cases_server import CONTEXT_QUERY, session_id
from bench.databases import postgres_database, sqlite_database
from bench.seed import seed_folded_session

# (module, class or None, attribute, label): the phases of GET …/context and the stateless route.
PHASES = (
    ("app.repositories.context", "ContextRepository", "served_state", "cache: stamp read"),
    ("app.services.context", "ContextAssembler", "serve", "service: serve (all phases)"),
    ("app.services.context", "ContextAssembler", "_load", "  read transaction (_load)"),
    ("app.repositories.sessions", "SessionRepository", "get_or_raise", "    session row"),
    (
        "app.repositories.context",
        "ContextRepository",
        "session_for_context",
        "    session row + calibrations",
    ),
    (
        "app.repositories.context",
        "ContextRepository",
        "messages_after",
        "    messages after summary",
    ),
    ("app.repositories.context", "ContextRepository", "user_messages_page", "    pinned message"),
    (
        "app.repositories.context",
        "ContextRepository",
        "live_with_pin_candidates",
        "    messages after summary + pinned candidates",
    ),
    ("app.repositories.calibration", "CalibrationRepository", "get", "    calibration row"),
    ("app.services.context", "ContextAssembler", "_assemble", "  engine (_assemble)"),
    ("app.repositories.context", "ContextRepository", "record_served", "  write: record_served"),
    ("app.services.assemble_context", None, "assemble_posted", "service: assemble_posted"),
    ("app.services.summarize_context", None, "to_messages", "  validate + count messages"),
    ("app.engine.assemble", None, "assemble", "  engine: assemble()"),
)


class PhaseClock:
    def __init__(self) -> None:
        self.seconds: defaultdict[str, float] = defaultdict(float)
        self.calls: Counter[str] = Counter()
        self.active = True

    def wrap(self, function: Callable[..., Any], label: str) -> Callable[..., Any]:
        if asyncio.iscoroutinefunction(function):

            @functools.wraps(function)
            async def timed_async(*args: Any, **kwargs: Any) -> Any:
                started = time.perf_counter()
                try:
                    return await function(*args, **kwargs)
                finally:
                    self._record(label, started)

            return timed_async

        @functools.wraps(function)
        def timed(*args: Any, **kwargs: Any) -> Any:
            started = time.perf_counter()
            try:
                return function(*args, **kwargs)
            finally:
                self._record(label, started)

        return timed

    def _record(self, label: str, started: float) -> None:
        if self.active:
            self.seconds[label] += time.perf_counter() - started
            self.calls[label] += 1

    def install(self) -> None:
        """Wrap every phase that exists; modules that imported a function by name see the
        wrapper only if they look it up at call time, so both places are patched."""
        for module_name, class_name, attribute, label in PHASES:
            try:
                module = importlib.import_module(module_name)
            except ImportError:
                continue
            owner: Any = getattr(module, class_name, None) if class_name else module
            original = getattr(owner, attribute, None) if owner is not None else None
            if original is None or isinstance(original, staticmethod):
                continue
            wrapped = self.wrap(original, label)
            setattr(owner, attribute, wrapped)
            if class_name is None:
                for other in list(sys.modules.values()):
                    if getattr(other, attribute, None) is original and other.__name__.startswith(
                        "app."
                    ):
                        setattr(other, attribute, wrapped)

    def report(self, requests: int) -> str:
        lines = [f"phase wall times per request ({requests} requests, not profiled):"]
        for label in dict.fromkeys(label for *_, label in PHASES):
            if label in self.seconds:
                per = self.seconds[label] / requests * 1000
                lines.append(
                    f"  {label:48s} {per:8.2f} ms  ({self.calls[label] / requests:.1f} calls)"
                )
        return "\n".join(lines)


async def _drive(
    database_url: str, args: argparse.Namespace, clock: PhaseClock, profiler: cProfile.Profile
) -> float:
    app = create_app(Settings(database_url=database_url))
    one: Callable[[], Awaitable[httpx.Response]]
    async with app.router.lifespan_context(app):
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://bench") as client:
            if args.case == "context":
                await seed_folded_session(database_url, session_id(args.size), args.size)
                path = f"/sessions/{session_id(args.size)}/context?{CONTEXT_QUERY}"
                one = functools.partial(client.get, path)
            else:
                one = functools.partial(client.post, "/assemble-context", json=assemble_body())
            for _ in range(3):  # warm caches (encodings, statement caches)
                (await one()).raise_for_status()
            clock.install()
            started = time.perf_counter()
            for _ in range(args.requests):
                (await one()).raise_for_status()
            wall: float = (time.perf_counter() - started) / int(args.requests)
            clock.active = False
            profiler.enable()
            for _ in range(args.requests):
                (await one()).raise_for_status()
            profiler.disable()
    return wall


def _profile_report(profiler: cProfile.Profile, top: int) -> str:
    out = io.StringIO()
    stats = pstats.Stats(profiler, stream=out)
    for key in ("tottime", "cumulative"):
        out.write(f"\n--- top {top} by {key} (profiled pass) ---\n")
        stats.sort_stats(key).print_stats(top)
    return out.getvalue()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="bench.profile", description=__doc__)
    parser.add_argument("case", choices=["context", "assemble"])
    parser.add_argument("--backend", choices=["sqlite", "postgresql"], default="sqlite")
    parser.add_argument("--size", type=int, default=1000, help="stored messages (context)")
    parser.add_argument("--requests", type=int, default=200)
    parser.add_argument("--top", type=int, default=25)
    args = parser.parse_args(argv)
    database: Callable[[], contextlib.AbstractContextManager[str]] = (
        sqlite_database if args.backend == "sqlite" else postgres_database
    )
    clock, profiler = PhaseClock(), cProfile.Profile()
    with database() as url:
        wall = asyncio.run(_drive(url, args, clock, profiler))
    print(f"request wall time (in-process, no sockets): {wall * 1000:.2f} ms")
    print(clock.report(args.requests))
    print(_profile_report(profiler, args.top))
    return 0


if __name__ == "__main__":
    sys.exit(main())
