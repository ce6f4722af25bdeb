"""The one load generator: wrk (Debian package `wrk`), in C, so the client is not what limits
a ratio. bench/wrk.lua makes it print its figures as one JSON line."""

from __future__ import annotations

import json
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

SCRIPT = Path(__file__).with_name("wrk.lua")


@dataclass(frozen=True, slots=True)
class Load:
    requests: int
    seconds: float
    errors: int
    p50_ms: float
    p99_ms: float

    @property
    def rps(self) -> float:
        return self.requests / self.seconds if self.seconds else 0.0


def require() -> None:
    if shutil.which("wrk") is None:
        raise SystemExit(
            "bench: wrk is missing: `apt-get install -y wrk` (make bench does, as root)"
        )


def run(port: int, path: str, *, connections: int, seconds: float) -> Load:
    """wrk -t1 on GET http://127.0.0.1:`port``path` for `seconds` (raises on any error)."""
    command = ["wrk", "-t1", f"-c{connections}", f"-d{seconds}s", "--timeout", "30s"]
    command += ["-s", str(SCRIPT)]
    command.append(f"http://127.0.0.1:{port}{path}")
    out = subprocess.run(command, capture_output=True, text=True, timeout=seconds + 30, check=True)
    load = Load(**json.loads(out.stdout.strip().splitlines()[-1]))
    if load.errors or not load.requests:
        raise RuntimeError(f"wrk saw {load.errors} errors on {path}: {out.stdout[-400:]}")
    return load
