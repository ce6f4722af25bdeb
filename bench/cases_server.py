"""Cases 1, 2 and 5 (and the HTTP side of 4) against one database, over loopback HTTP.

For one backend: seed folded sessions of 1k, 10k and 100k messages, start two production
servers on it, one as deployed and one with the served-context cache off (every request
assembles, as the first GET after an append does), then measure
- latency of `GET /sessions/{id}/context` per history size on the cache-off server, one
  request at a time on a keep-alive connection (a frontend before each generation), in
  interleaved rounds (1k, 10k, 100k, 1k, 1k from the cache, …) so machine noise lands on
  every series alike; samples are pooled;
- throughput of that route, from the cache and with the cache off, vs `GET /healthz` with
  32 connections for a fixed time, two alternating rounds each;
- appending 1,000-message batches through the API (the slow way to seed, for reference);
- `POST /assemble-context` with the case-4 body, when asked.
"""

from __future__ import annotations

import asyncio
import statistics
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bench import wrk
from bench.cases_assemble import assemble_body, langchain_trimmer
from bench.conversation import transcript
from bench.http import call, load
from bench.loadgen import percentile
from bench.seed import MODEL, SYSTEM_PROMPT, SeededSession, seed_folded_session
from bench.server import logged_errors, running_server

SIZES = (1_000, 10_000, 100_000)
# 10 rounds × 100 requests = 1,000 samples per size; short interleaved rounds spread a
# neighbour's burst of load over every size alike (~70 s per database at ~16 ms a request).
LATENCY_ROUNDS = 10
LATENCY_REQUESTS = 100
LATENCY_SECONDS = 6.0  # per size and round, whichever bound comes first
THROUGHPUT_ROUNDS = 2
THROUGHPUT_CONCURRENCY = 32
THROUGHPUT_SECONDS = 4.0
THROUGHPUT_MAX_REQUESTS = 200_000
APPEND_BATCHES = 3
APPEND_BATCH_SIZE = 1000
CONTEXT_QUERY = "format=anthropic"
# POST /assemble-context (cold and warm) vs LangChain, interleaved: ~0.1–0.7 s each.
ASSEMBLE_ROUNDS = 10


def session_id(size: int) -> str:
    return f"bench-{size}"


def context_path(size: int) -> str:
    return f"/sessions/{session_id(size)}/context?{CONTEXT_QUERY}"


@dataclass(slots=True)
class Latency:
    """Samples of one series, pooled and per round.

    The figures held to the target are medians over rounds of each round's percentile: a
    burst of load from a neighbour lands in one or two rounds of one series and is voted
    out, where in the pooled p99 (the 10th-worst of 1,000) it decides the figure alone."""

    rounds: list[list[float]] = field(default_factory=list)
    errors: int = 0

    @property
    def samples_ms(self) -> list[float]:
        return [sample for samples in self.rounds for sample in samples]

    def _per_round(self, fraction: float) -> float:
        values = [percentile(sorted(r), fraction) for r in self.rounds if r]
        return statistics.median(values) if values else 0.0

    @property
    def p50_ms(self) -> float:
        return self._per_round(0.50)

    @property
    def p99_ms(self) -> float:
        return self._per_round(0.99)

    @property
    def pooled_p99_ms(self) -> float:
        return percentile(sorted(self.samples_ms), 0.99)


@dataclass(slots=True)
class BackendRun:
    backend: str
    seeds: list[SeededSession] = field(default_factory=list)
    context_check: dict[str, Any] = field(default_factory=dict)
    latency: dict[int, Latency] = field(default_factory=dict)
    control: Latency = field(default_factory=Latency)
    """The 1k session measured again, interleaved with the others (the noise floor)."""
    cached: Latency = field(default_factory=Latency)
    """The 1k session on the server with the cache on (hits after the first request)."""
    healthz_rps: list[float] = field(default_factory=list)
    context_rps: list[float] = field(default_factory=list)
    """GET …/context on the server as deployed: a repeated read is a cache hit."""
    uncached_rps: list[float] = field(default_factory=list)
    """GET …/context with the cache off: every request loads and assembles."""
    wrk_rps: dict[str, list[float]] = field(default_factory=dict)
    """The same three series measured by wrk, when installed (bench/wrk.py)."""
    context_errors: int = 0
    append_seconds: list[float] = field(default_factory=list)
    assemble_http: dict[str, Any] | None = None
    problems: list[str] = field(default_factory=list)

    @property
    def throughput_ratio(self) -> float | None:
        return self._ratio(self.context_rps)

    @property
    def uncached_ratio(self) -> float | None:
        return self._ratio(self.uncached_rps)

    def _ratio(self, rps: list[float]) -> float | None:
        if not self.healthz_rps or not rps:
            return None
        return statistics.mean(rps) / statistics.mean(self.healthz_rps)


@dataclass(frozen=True, slots=True)
class Ports:
    cached: int  # the server as deployed
    uncached: int  # FOLDWISE_CONTEXT_CACHE_BYTES=0


def _check_context(port: int, run: BackendRun) -> bool:
    """The route answers 200 with the folded state; otherwise record why and skip it."""
    status, body, _ = call(port, "GET", context_path(SIZES[0]))
    if status != 200 or not isinstance(body, dict):
        run.problems.append(f"GET {context_path(SIZES[0])} answered {status}: {str(body)[:200]}")
        return False
    run.context_check = {
        "summary_version": (body.get("summary") or {}).get("version"),
        "summarized": body.get("summarized"),
        "messages_included": body.get("messages_included"),
        "messages_total": body.get("messages_total"),
        "total_tokens": (body.get("usage") or {}).get("total_tokens"),
    }
    if not body.get("summary") or body.get("summarized"):
        run.problems.append(
            f"unexpected context state (no summary, or a fold): {run.context_check}"
        )
    return True


def _measure_latency(ports: Ports, run: BackendRun) -> None:
    """Interleaved rounds over the sizes with the cache off, plus the 1k session once more as
    a control (its ratio to the 1k figure is what noise alone does to a ratio in this run)
    and once from the cache."""
    run.latency = {size: Latency() for size in SIZES}
    series = [(ports.uncached, size, run.latency[size]) for size in SIZES] + [
        (ports.uncached, SIZES[0], run.control),
        (ports.cached, SIZES[0], run.cached),
    ]
    for _ in range(LATENCY_ROUNDS):
        for port, size, sink in series:
            result = load(
                port,
                context_path(size),
                concurrency=1,
                duration=LATENCY_SECONDS,
                max_requests=LATENCY_REQUESTS,
                warmup_requests=10,
            )
            sink.rounds.append(result["samples_ms"])
            sink.errors += result["errors"]


def _measure_throughput(ports: Ports, run: BackendRun) -> None:
    """Alternating rounds of healthz, context from the cache and context with the cache off;
    each measurement is repeated by wrk right after, when installed (bench/wrk.py)."""
    for _ in range(THROUGHPUT_ROUNDS):
        for series, port, path, sink in (
            ("healthz", ports.cached, "/healthz", run.healthz_rps),
            ("cached", ports.cached, context_path(SIZES[0]), run.context_rps),
            ("uncached", ports.uncached, context_path(SIZES[0]), run.uncached_rps),
        ):
            result = load(
                port,
                path,
                concurrency=THROUGHPUT_CONCURRENCY,
                duration=THROUGHPUT_SECONDS,
                max_requests=THROUGHPUT_MAX_REQUESTS,
                warmup_requests=200,
            )
            sink.append(result["rps"])
            if series != "healthz":
                run.context_errors += result["errors"]
            if wrk.available():
                rps = wrk.requests_per_second(
                    port, path, connections=THROUGHPUT_CONCURRENCY, seconds=THROUGHPUT_SECONDS
                )
                run.wrk_rps.setdefault(series, []).append(rps)


def _measure_append(port: int, run: BackendRun) -> None:
    status, body, _ = call(
        port,
        "POST",
        "/sessions",
        {"id": "bench-append", "model": MODEL, "system_prompt": SYSTEM_PROMPT},
    )
    if status != 201:
        run.problems.append(f"POST /sessions answered {status}: {str(body)[:200]}")
        return
    messages = transcript(APPEND_BATCHES * APPEND_BATCH_SIZE, seed=41)
    for start in range(0, len(messages), APPEND_BATCH_SIZE):
        batch = messages[start : start + APPEND_BATCH_SIZE]
        status, body, seconds = call(
            port, "POST", "/sessions/bench-append/messages", {"messages": batch}
        )
        if status != 201:
            run.problems.append(f"append answered {status}: {str(body)[:200]}")
            return
        run.append_seconds.append(seconds)


def _measure_assemble_http(port: int, run: BackendRun) -> None:
    """POST /assemble-context one request at a time, interleaved with LangChain's trim of the
    same messages in this process (the server idles meanwhile), so both see the same load.
    Cold: a history the server never saw (fresh texts each round); warm: one history
    re-posted, as a client does before every generation."""
    warm_body = assemble_body()
    status, answer, _ = call(port, "POST", "/assemble-context", warm_body)
    if status != 200 or not isinstance(answer, dict):
        run.problems.append(f"POST /assemble-context answered {status}: {str(answer)[:200]}")
        return
    cold_bodies = [assemble_body(seed=1000 + index) for index in range(ASSEMBLE_ROUNDS)]
    trim = langchain_trimmer(warm_body["messages"])
    trim()  # warm-up
    samples: dict[str, list[float]] = {"cold": [], "warm": [], "langchain": []}
    for cold_body in cold_bodies:
        for kind, body in (("cold", cold_body), ("warm", warm_body)):
            status, _, seconds = call(port, "POST", "/assemble-context", body)
            if status != 200:
                run.problems.append(f"POST /assemble-context answered {status}")
                return
            samples[kind].append(seconds * 1000)
        started = time.perf_counter()
        trim()
        samples["langchain"].append((time.perf_counter() - started) * 1000)
    run.assemble_http = {
        "requests": len(samples["warm"]),
        "cold_ms": statistics.median(samples["cold"]),
        "warm_ms": statistics.median(samples["warm"]),
        "langchain_ms": statistics.median(samples["langchain"]),
        "messages_included": answer.get("messages_included"),
    }


def _step(run: BackendRun, what: str, action: Callable[[], object]) -> object:
    """Run one measurement; a failure is recorded and the others still run."""
    try:
        return action()
    except Exception as exc:  # reported in the document, with the rest of the numbers
        run.problems.append(f"{what} failed: {type(exc).__name__}: {exc}")
        return None


def run_backend(backend: str, database_url: str, *, with_assemble: bool) -> BackendRun:
    run = BackendRun(backend)
    for size in SIZES:
        run.seeds.append(asyncio.run(seed_folded_session(database_url, session_id(size), size)))
    with tempfile.TemporaryDirectory(prefix="foldwise-server-") as directory:
        logs = Path(directory) / "server.log", Path(directory) / "server-uncached.log"
        with (
            running_server(database_url, logs[0]) as port,
            running_server(database_url, logs[1], {"FOLDWISE_CONTEXT_CACHE_BYTES": "0"}) as bare,
        ):
            ports = Ports(cached=port, uncached=bare)
            _step(run, "append through the API", lambda: _measure_append(port, run))
            if _step(run, "context check", lambda: _check_context(bare, run)):
                _step(run, "context latency", lambda: _measure_latency(ports, run))
                _step(run, "throughput", lambda: _measure_throughput(ports, run))
            if with_assemble:
                _step(run, "assemble over HTTP", lambda: _measure_assemble_http(port, run))
        for log_path in logs:
            count, errors = logged_errors(log_path)
            if count:
                run.problems.append(
                    f"{log_path.name} logged {count} tracebacks: " + " | ".join(errors)
                )
    return run
