"""Talking to the benchmark server: one-off JSON calls, and load runs in a separate process."""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

from bench.server import HOST, PROJECT_ROOT

# A load run is bounded by its own --duration; this only catches a wedged client.
LOADGEN_GRACE_S = 90.0


def call(port: int, method: str, path: str, body: Any = None) -> tuple[int, Any, float]:
    """(status, decoded JSON body, seconds) of one request; never raises on 4xx/5xx."""
    data = json.dumps(body).encode() if body is not None else None
    request = urllib.request.Request(
        f"http://{HOST}:{port}{path}",
        data=data,
        method=method,
        headers={"Content-Type": "application/json"} if data is not None else {},
    )
    started = time.perf_counter()
    try:
        with urllib.request.urlopen(request, timeout=120) as response:
            payload, status = response.read(), response.status
    except urllib.error.HTTPError as error:
        payload, status = error.read(), error.code
    except OSError as error:  # refused, reset, broken pipe: report it as status 0
        return 0, f"{type(error).__name__}: {error}", time.perf_counter() - started
    elapsed = time.perf_counter() - started
    try:
        decoded = json.loads(payload) if payload else None
    except ValueError:
        decoded = payload.decode("utf-8", "replace")
    return status, decoded, elapsed


def load(
    port: int,
    path: str,
    *,
    concurrency: int,
    duration: float,
    max_requests: int,
    warmup_requests: int = 20,
    method: str = "GET",
    body: Any = None,
) -> dict[str, Any]:
    """Run bench.loadgen against the server and return its JSON result."""
    with tempfile.TemporaryDirectory(prefix="foldwise-load-") as directory:
        command = [
            sys.executable,
            "-m",
            "bench.loadgen",
            "--port",
            str(port),
            "--path",
            path,
            "--method",
            method,
            "--concurrency",
            str(concurrency),
            "--duration",
            str(duration),
            "--max-requests",
            str(max_requests),
            "--warmup-requests",
            str(warmup_requests),
            "--samples",
        ]
        if body is not None:
            body_file = Path(directory) / "body.json"
            body_file.write_text(json.dumps(body))
            command += ["--body-file", str(body_file)]
        completed = subprocess.run(
            command,
            cwd=PROJECT_ROOT,
            capture_output=True,
            text=True,
            timeout=duration + LOADGEN_GRACE_S,
            check=True,
        )
    result: dict[str, Any] = json.loads(completed.stdout)
    return result
