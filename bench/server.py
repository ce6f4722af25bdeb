"""Run the service as production does, in its own process, and always stop it.

`python -m bench.server --port P` serves `create_app()` with the settings `foldwise serve`
is meant to use in production — uvloop, httptools, one worker, no access log — bound to
127.0.0.1. `running_server(url)` starts that process on a free port in 8030–8049, waits for
`/healthz`, yields the port, and terminates the process on the way out, error or not.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import re
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator, Mapping
from pathlib import Path

HOST = "127.0.0.1"
PROJECT_ROOT = Path(__file__).resolve().parents[1]
# The last line of a traceback: "package.module.SomeError: message".
EXCEPTION_LINE = re.compile(r"^[A-Za-z_][\w.]*(Error|Exception|Exit|Interrupt)\b")
PORTS = range(8030, 8050)
# The app imports tiktoken, SQLAlchemy and FastAPI: a cold start takes ~2 s on 2 cores.
START_TIMEOUT_S = 30.0
STOP_TIMEOUT_S = 10.0


def free_port() -> int:
    for port in PORTS:
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
            try:
                probe.bind((HOST, port))
            except OSError:
                continue
            return port
    raise RuntimeError(f"no free port in {PORTS.start}-{PORTS.stop - 1}")


def _wait_healthy(port: int, process: subprocess.Popen[bytes]) -> None:
    deadline = time.monotonic() + START_TIMEOUT_S
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"server exited with status {process.returncode} during start")
        try:
            with urllib.request.urlopen(f"http://{HOST}:{port}/healthz", timeout=1) as response:
                if response.status == 200:
                    return
        except OSError:
            time.sleep(0.1)
    raise RuntimeError(f"server on port {port} not healthy after {START_TIMEOUT_S:.0f} s")


@contextlib.contextmanager
def running_server(
    database_url: str, log_path: Path, extra_env: Mapping[str, str] | None = None
) -> Iterator[int]:
    """A production-configured server on `database_url` (already migrated); yields its port.

    The server's output goes to `log_path` (read it with `logged_errors`); `extra_env` sets
    FOLDWISE_* settings on top of the defaults."""
    port = free_port()
    # Default settings, as a fresh deployment: nothing inherited from the caller's FOLDWISE_*
    # or Anthropic variables, and no .env (the server runs in the log's directory).
    env = {
        key: value
        for key, value in os.environ.items()
        if not key.startswith(("FOLDWISE_", "ANTHROPIC_"))
    }
    env |= {
        "FOLDWISE_DATABASE_URL": database_url,
        "FOLDWISE_LOG_LEVEL": "warning",
        "PYTHONPATH": os.pathsep.join(filter(None, [str(PROJECT_ROOT), env.get("PYTHONPATH")])),
    }
    env |= dict(extra_env or {})
    with log_path.open("wb") as log:
        process = subprocess.Popen(
            [sys.executable, "-m", "bench.server", "--port", str(port)],
            env=env,
            cwd=log_path.parent,
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=subprocess.STDOUT,
        )
        try:
            _wait_healthy(port, process)
            yield port
        finally:
            process.terminate()
            try:
                process.wait(STOP_TIMEOUT_S)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()


def logged_errors(log_path: Path) -> tuple[int, list[str]]:
    """How many tracebacks the server logged, and the distinct exception lines (first 5)."""
    lines = log_path.read_text("utf-8", "replace").splitlines() if log_path.exists() else []
    count = sum(1 for line in lines if line.startswith("Traceback"))
    last_lines = []
    for index, line in enumerate(lines):
        ends_traceback = index + 1 == len(lines) or not lines[index + 1].startswith((" ", "\t"))
        is_exception = EXCEPTION_LINE.match(line) is not None
        is_new = "direct cause" not in line and line[:300] not in last_lines
        if ends_traceback and is_exception and is_new:
            last_lines.append(line[:300])
    return count, last_lines[:5]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="bench.server")
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument(
        "--access-log", action="store_true", help="log every request, as `foldwise serve` does"
    )
    args = parser.parse_args(argv)
    if args.port not in PORTS:
        parser.error(f"port must be in {PORTS.start}-{PORTS.stop - 1}")

    import uvicorn

    from app.main import create_app

    uvicorn.run(
        create_app(),
        host=HOST,
        port=args.port,
        loop="uvloop",
        http="httptools",
        access_log=args.access_log,
        log_level="info" if args.access_log else "warning",
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
