"""An optional cross-check of the throughput case with wrk (the Debian package `wrk`).

The Python load generator shares the 2 cores with the server it measures; wrk, in C, costs
far less per request. When both agree, the generator is not what limits a ratio. wrk is only
detected, never downloaded: without it the report says how to install it.
"""

from __future__ import annotations

import re
import shutil
import subprocess

WRK_THREADS = 1
WRK_TIMEOUT_S = 30.0
INSTALL_HINT = "wrk not installed (`apt-get install -y wrk`): cross-check skipped"


def available() -> bool:
    return shutil.which("wrk") is not None


def requests_per_second(port: int, path: str, *, connections: int, seconds: float) -> float:
    """wrk's Requests/sec for GET `path` on 127.0.0.1:`port` (raises if wrk reports errors)."""
    command = [
        "wrk",
        f"-t{WRK_THREADS}",
        f"-c{connections}",
        f"-d{seconds:.0f}s",
        f"http://127.0.0.1:{port}{path}",
    ]
    out = subprocess.run(
        command, capture_output=True, text=True, timeout=seconds + WRK_TIMEOUT_S, check=True
    ).stdout
    if "Non-2xx or 3xx responses" in out or "Socket errors" in out:
        raise RuntimeError(f"wrk saw errors on {path}: {out.strip().splitlines()[-3:]}")
    found = re.search(r"Requests/sec:\s+([\d.]+)", out)
    if found is None:
        raise RuntimeError(f"no Requests/sec in wrk's output for {path}")
    return float(found.group(1))
