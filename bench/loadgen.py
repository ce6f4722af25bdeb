"""A small closed-loop HTTP/1.1 load generator: keep-alive connections over raw asyncio sockets.

Run as its own process (`python -m bench.loadgen …`) so the client never shares an event
loop or a GIL with the server it measures. Each of `--concurrency` connections sends one
request, reads the whole response (Content-Length or chunked), and sends the next, until
`--duration` seconds have passed or `--max-requests` have completed — both bounds always
hold. A warm-up phase of the same shape runs first and is not recorded. Prints one JSON
object: request and error counts, elapsed seconds, requests per second and latency
percentiles in milliseconds (plus every sample with `--samples`).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

# One request that takes longer than this is counted as an error and its connection dropped.
REQUEST_TIMEOUT_S = 60.0


@dataclass(slots=True)
class Tally:
    latencies_s: list[float] = field(default_factory=list)
    errors: int = 0
    statuses: dict[int, int] = field(default_factory=dict)


def build_request(method: str, path: str, host: str, port: int, body: bytes | None) -> bytes:
    lines = [f"{method} {path} HTTP/1.1", f"Host: {host}:{port}", "Connection: keep-alive"]
    if body is not None:
        lines += ["Content-Type: application/json", f"Content-Length: {len(body)}"]
    head = ("\r\n".join(lines) + "\r\n\r\n").encode("ascii")
    return head + (body or b"")


async def read_response(reader: asyncio.StreamReader) -> int:
    """Read one whole response; return its status code."""
    head = await reader.readuntil(b"\r\n\r\n")
    header_lines = head.decode("latin-1").split("\r\n")
    status = int(header_lines[0].split(" ", 2)[1])
    headers = {}
    for line in header_lines[1:]:
        if ":" in line:
            name, value = line.split(":", 1)
            headers[name.strip().lower()] = value.strip()
    if "content-length" in headers:
        await reader.readexactly(int(headers["content-length"]))
    elif headers.get("transfer-encoding", "").lower() == "chunked":
        while True:
            size = int((await reader.readuntil(b"\r\n")).split(b";")[0], 16)
            await reader.readexactly(size + 2)  # chunk + CRLF
            if size == 0:
                break
    return status


async def connection_loop(
    host: str, port: int, request: bytes, deadline: float, budget: list[int], tally: Tally | None
) -> None:
    """Send requests back to back on one keep-alive connection until a bound is hit."""
    reader, writer = await asyncio.open_connection(host, port)
    try:
        while time.perf_counter() < deadline and budget[0] > 0:
            budget[0] -= 1
            started = time.perf_counter()
            try:
                writer.write(request)
                status = await asyncio.wait_for(read_response(reader), REQUEST_TIMEOUT_S)
            except (OSError, asyncio.IncompleteReadError, TimeoutError, ValueError):
                if tally is not None:
                    tally.errors += 1
                return
            if tally is None:
                continue
            tally.statuses[status] = tally.statuses.get(status, 0) + 1
            if 200 <= status < 300:
                tally.latencies_s.append(time.perf_counter() - started)
            else:
                tally.errors += 1
    finally:
        writer.close()


async def run_phase(
    args: argparse.Namespace, request: bytes, seconds: float, limit: int, tally: Tally | None
) -> float:
    budget = [limit]
    deadline = time.perf_counter() + seconds
    started = time.perf_counter()
    await asyncio.gather(
        *(
            connection_loop(args.host, args.port, request, deadline, budget, tally)
            for _ in range(args.concurrency)
        )
    )
    return time.perf_counter() - started


def percentile(sorted_values: list[float], fraction: float) -> float:
    """Nearest-rank percentile of already sorted values (0 for none)."""
    if not sorted_values:
        return 0.0
    rank = max(1, round(fraction * len(sorted_values) + 0.5))
    return sorted_values[min(len(sorted_values), rank) - 1]


async def main_async(args: argparse.Namespace, body: bytes | None) -> dict[str, Any]:
    request = build_request(args.method, args.path, args.host, args.port, body)
    if args.warmup_requests > 0:
        await run_phase(args, request, args.warmup_seconds, args.warmup_requests, None)
    tally = Tally()
    elapsed = await run_phase(args, request, args.duration, args.max_requests, tally)
    ordered = sorted(tally.latencies_s)
    result: dict[str, Any] = {
        "path": args.path,
        "concurrency": args.concurrency,
        "requests": len(ordered),
        "errors": tally.errors,
        "statuses": {str(k): v for k, v in sorted(tally.statuses.items())},
        "elapsed_s": elapsed,
        "rps": len(ordered) / elapsed if elapsed > 0 else 0.0,
        "p50_ms": percentile(ordered, 0.50) * 1000,
        "p99_ms": percentile(ordered, 0.99) * 1000,
        "mean_ms": (sum(ordered) / len(ordered) * 1000) if ordered else 0.0,
    }
    if args.samples:
        result["samples_ms"] = [value * 1000 for value in tally.latencies_s]
    return result


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="bench.loadgen", description=__doc__)
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--path", required=True)
    parser.add_argument("--method", default="GET")
    parser.add_argument("--body-file", default=None, help="JSON body to send with every request")
    parser.add_argument("--concurrency", type=int, default=1)
    parser.add_argument("--duration", type=float, default=5.0, help="seconds measured, at most")
    parser.add_argument("--max-requests", type=int, default=100_000)
    parser.add_argument("--warmup-seconds", type=float, default=1.0)
    parser.add_argument("--warmup-requests", type=int, default=50)
    parser.add_argument("--samples", action="store_true", help="include every latency sample")
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    try:
        import uvloop

        runner: Any = uvloop.run
    except ImportError:  # the stock loop works too, it only costs the client more CPU
        runner = asyncio.run
    body = Path(args.body_file).read_bytes() if args.body_file else None
    result = runner(main_async(args, body))
    json.dump(result, sys.stdout)
    sys.stdout.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
