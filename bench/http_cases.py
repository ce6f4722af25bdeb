"""Cases over loopback HTTP against `foldwise serve`, for one database.

Sessions of every size are seeded in bulk (bench/seed.py). Servers: one worker and the
production worker count, each as deployed and with the response cache off
(`FOLDWISE_CONTEXT_CACHE_BYTES=0`: every request loads and assembles, as the first read after
an append does). All load comes from wrk (bench/wrk.py), series interleaved round by round,
figures are medians over rounds.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import statistics
import time
import urllib.error
import urllib.request
from typing import Any

from bench import wrk
from bench.inprocess import assemble_body, langchain_trim
from bench.seed import MODEL, SYSTEM_PROMPT, seed_folded_session
from bench.servers import serving
from tests.support.transcripts import agent_session

QUERY = "format=anthropic"
LATENCY_ROUNDS, LATENCY_SECONDS = 10, 1
THROUGHPUT_ROUNDS, THROUGHPUT_SECONDS, CONNECTIONS = 3, 4, 32
ASSEMBLE_ROUNDS = 20


def context_path(size: int) -> str:
    return f"/sessions/bench-{size}/context?{QUERY}"


def call(port: int, method: str, path: str, body: Any = None) -> tuple[int, Any, float]:
    """(status, JSON body, seconds) of one request."""
    data = json.dumps(body).encode() if body is not None else None
    headers = {"Content-Type": "application/json"} if data else {}
    request = urllib.request.Request(f"http://127.0.0.1:{port}{path}", data, headers, method=method)
    started = time.perf_counter()
    try:
        with urllib.request.urlopen(request, timeout=120) as response:
            status, payload = response.status, response.read()
    except urllib.error.HTTPError as error:
        status, payload = error.code, error.read()
    seconds = time.perf_counter() - started  # until the last byte: decoding is the client's
    return status, json.loads(payload or b"null"), seconds


def check(port: int, size: int) -> dict[str, Any]:
    """What the context of the smallest session holds; it must be folded and not fold again."""
    status, body, _ = call(port, "GET", context_path(size))
    if status != 200 or not body.get("summary") or body.get("summarized"):
        raise RuntimeError(f"unexpected context ({status}): {str(body)[:300]}")
    return {
        "version": body["summary"]["version"],
        "included": body["messages_included"],
        "total": body["messages_total"],
        "tokens": body["usage"]["total_tokens"],
    }


def latency(series: dict[str, tuple[int, str]]) -> dict[str, dict[str, float]]:
    """One connection, requests back to back: each series' p50 and p99, round by round."""
    rounds: dict[str, list[wrk.Load]] = {name: [] for name in series}
    for index in range(LATENCY_ROUNDS + 1):  # the first round warms up
        for name, (port, path) in series.items():
            load = wrk.run(port, path, connections=1, seconds=LATENCY_SECONDS)
            if index:
                rounds[name].append(load)
    return {
        name: {
            "p50": [load.p50_ms for load in loads],
            "p99": [load.p99_ms for load in loads],
            "requests": sum(load.requests for load in loads),
        }
        for name, loads in rounds.items()
    }


def throughput(cached: int, uncached: int, path: str) -> dict[str, float]:
    """req/s of healthz and of the context from the cache and with it off, interleaved; the
    ratios are medians of each round's ratio to that round's healthz."""
    series = {
        "healthz": (cached, "/healthz"),
        "cached": (cached, path),
        "uncached": (uncached, path),
    }
    rps: dict[str, list[float]] = {name: [] for name in series}
    for port, url in series.values():  # a warm-up: every worker up, every cache filled
        wrk.run(port, url, connections=CONNECTIONS, seconds=2)
    for _ in range(THROUGHPUT_ROUNDS):
        for name, (port, url) in series.items():
            load = wrk.run(port, url, connections=CONNECTIONS, seconds=THROUGHPUT_SECONDS)
            rps[name].append(load.rps)
    out = {name: statistics.median(values) for name, values in rps.items()}
    for name in ("cached", "uncached"):
        pairs = zip(rps[name], rps["healthz"], strict=True)
        out[f"{name}_ratio"] = statistics.median(c / h for c, h in pairs)
    return out


def append_batches(port: int) -> list[float]:
    """Seconds per 1,000-message append through the API (the slow way to seed)."""
    session = {"id": "bench-append", "model": MODEL, "system_prompt": SYSTEM_PROMPT}
    call(port, "POST", "/sessions", session)
    messages = agent_session(3000, seed=41)
    seconds = []
    for start in range(0, len(messages), 1000):
        batch = {"messages": messages[start : start + 1000]}
        status, body, elapsed = call(port, "POST", "/sessions/bench-append/messages", batch)
        if status != 201:
            raise RuntimeError(f"append answered {status}: {str(body)[:200]}")
        seconds.append(elapsed)
    return seconds


def assemble_http(port: int) -> dict[str, float]:
    """POST /assemble-context one at a time, cold (a history never posted) and warm (re-posted),
    interleaved with LangChain's trim of the same messages in this process."""
    warm = assemble_body()
    trim = langchain_trim(warm["messages"])
    samples: dict[str, list[float]] = {"cold": [], "warm": [], "langchain": []}
    call(port, "POST", "/assemble-context", warm)
    trim()
    for index in range(ASSEMBLE_ROUNDS):
        for kind, body in (("cold", assemble_body(seed=1000 + index)), ("warm", warm)):
            status, answer, seconds = call(port, "POST", "/assemble-context", body)
            if status != 200:
                raise RuntimeError(f"assemble-context answered {status}: {str(answer)[:200]}")
            samples[kind].append(seconds * 1000)
        started = time.perf_counter()
        trim()
        samples["langchain"].append((time.perf_counter() - started) * 1000)
    return {kind: statistics.median(values) for kind, values in samples.items()}


def run_backend(url: str, sizes: list[int], workers: int, with_assemble: bool) -> dict[str, Any]:
    out: dict[str, Any] = {"seed_s": {}}
    for size in sizes:
        out["seed_s"][size] = asyncio.run(seed_folded_session(url, f"bench-{size}", size))
    off = {"FOLDWISE_CONTEXT_CACHE_BYTES": "0"}
    with contextlib.ExitStack() as stack:
        ports = {
            (n, cache): stack.enter_context(serving(url, n, None if cache else off))
            for n in dict.fromkeys((1, workers))
            for cache in (True, False)
        }
        cached, bare = ports[(1, True)], ports[(1, False)]
        out["check"] = check(bare, sizes[0])
        series = {str(size): (bare, context_path(size)) for size in sizes}
        series |= {
            "control": (bare, context_path(sizes[0])),
            "cached": (cached, context_path(sizes[0])),
        }
        out["latency"] = latency(series)
        out["throughput"] = {
            n: throughput(ports[(n, True)], ports[(n, False)], context_path(sizes[0]))
            for n in dict.fromkeys((1, workers))
        }
        out["append_s"] = append_batches(cached)
        if with_assemble:
            out["assemble_http"] = assemble_http(cached)
    return out
