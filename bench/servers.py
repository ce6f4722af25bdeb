"""Throw-away migrated databases, and the service run as production runs it.

`serving(url, workers)` starts `foldwise serve` (the Dockerfile's command) on 127.0.0.1 with
default settings plus the given FOLDWISE_* overrides, waits for /healthz and always stops it.
The PostgreSQL database `foldwise_bench_<pid>` is created for one run and always dropped.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Iterator, Mapping
from pathlib import Path

from app.core.db import upgrade_database
from tests.support.servers import free_port

ROOT = Path(__file__).resolve().parents[1]
FOLDWISE = Path(sys.executable).with_name("foldwise")
PG_SERVER = os.environ.get("FOLDWISE_BENCH_PG", "postgresql://postgres@127.0.0.1:5432")


async def _pg_admin(statement: str) -> None:
    import asyncpg  # type: ignore[import-untyped]

    connection = await asyncpg.connect(f"{PG_SERVER}/postgres", timeout=5)
    try:
        await connection.execute(statement)
    finally:
        await connection.close()


def postgres_missing() -> str | None:
    """None when the PostgreSQL server answers, else why not."""
    try:
        asyncio.run(_pg_admin("SELECT 1"))
    except Exception as exc:  # any failure means "skip PostgreSQL", said in the report
        return f"{type(exc).__name__}: {exc}"
    return None


@contextlib.contextmanager
def database(backend: str) -> Iterator[str]:
    """A migrated, empty database of `backend` ("SQLite" or "PostgreSQL"); yields its URL."""
    if backend == "SQLite":
        with tempfile.TemporaryDirectory(prefix="foldwise-bench-") as directory:
            url = f"sqlite:///{directory}/bench.db"
            upgrade_database(url)
            yield url
        return
    name = f"foldwise_bench_{os.getpid()}"
    asyncio.run(_pg_admin(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
    asyncio.run(_pg_admin(f'CREATE DATABASE "{name}"'))
    try:
        upgrade_database(f"{PG_SERVER}/{name}")
        yield f"{PG_SERVER}/{name}"
    finally:
        asyncio.run(_pg_admin(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))


def _wait_healthy(port: int, process: subprocess.Popen[bytes], log: Path) -> None:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"server exited during start: {log.read_text()[-500:]}")
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz", timeout=1):
                return
        except OSError:
            time.sleep(0.2)
    raise RuntimeError(f"server on port {port} not healthy after 60 s")


@contextlib.contextmanager
def serving(url: str, workers: int = 1, env: Mapping[str, str] | None = None) -> Iterator[int]:
    """`foldwise serve --workers N` on `url`; yields its port. Tracebacks in its log raise."""
    port = free_port()
    clean = {k: v for k, v in os.environ.items() if not k.startswith(("FOLDWISE_", "ANTHROPIC_"))}
    clean |= {"FOLDWISE_DATABASE_URL": url, "FOLDWISE_LOG_LEVEL": "warning", **(env or {})}
    command = [str(FOLDWISE), "serve", "--port", str(port), "--workers", str(workers)]
    with tempfile.TemporaryDirectory(prefix="foldwise-server-") as directory:
        log = Path(directory) / "server.log"
        with log.open("wb") as out:
            process = subprocess.Popen(command, env=clean, cwd=directory, stdout=out, stderr=out)
        try:
            _wait_healthy(port, process, log)
            yield port
        finally:
            process.terminate()
            try:
                process.wait(15)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
        if "Traceback" in (text := log.read_text("utf-8", "replace")):
            raise RuntimeError(f"the server logged errors: {text[-800:]}")
