"""What every benchmark shares: databases, servers, wrk, targets, and docs/benchmarks.md.

Databases and servers are the test suite's (tests/support/): a migrated PostgreSQL database
per run on the test server (FOLDWISE_TEST_POSTGRES_URL, by default
postgresql://postgres@127.0.0.1:5432/test) and `foldwise serve` on loopback, here with the
service's default fold settings. Load comes from wrk (Debian package `wrk`, in C, so the
client is not what limits a ratio); bench/wrk.lua makes it print its figures as one JSON line.
A benchmark renders its template (bench/*.md.tmpl, `$name` placeholders) and `write` replaces
each `## ` section of the document the text has, leaving the others as they are.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import platform
import re
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from string import Template
from typing import Any

import asyncpg  # type: ignore[import-untyped]

from app.core.db import upgrade_database
from tests.support.databases import asyncpg_dsn, migrated_postgres_database, postgres_admin_url
from tests.support.servers import Server

HERE = Path(__file__).resolve().parent
DOC = HERE.parent / "docs" / "benchmarks.md"
# tests/support/servers.py waits for folds in the request that needs them; the benches
# measure the service as configured by default.
TEST_ONLY_ENV = ("FOLDWISE_FOLD_AHEAD", "FOLDWISE_FOLD_HARD_WAIT_S")


async def _ping_postgres() -> None:
    connection = await asyncpg.connect(asyncpg_dsn(postgres_admin_url()), timeout=5)
    await connection.close()


def postgres_missing() -> str | None:
    """None when the PostgreSQL server answers, else why not."""
    try:
        asyncio.run(_ping_postgres())
    except Exception as exc:  # any failure means "skip PostgreSQL", said in the report
        return f"{type(exc).__name__}: {exc}"
    return None


def backends(skip_postgres: bool) -> list[str]:
    return ["SQLite"] if skip_postgres or postgres_missing() else ["SQLite", "PostgreSQL"]


@contextlib.contextmanager
def database(backend: str) -> Iterator[str]:
    """A migrated, empty database of `backend` ("SQLite" or "PostgreSQL"); yields its URL."""
    if backend == "PostgreSQL":
        yield from migrated_postgres_database(f"foldwise_bench_{os.getpid()}")
        return
    with tempfile.TemporaryDirectory(prefix="foldwise-bench-") as directory:
        url = f"sqlite:///{directory}/bench.db"
        upgrade_database(url)
        yield url


@contextlib.contextmanager
def serving(url: str, env: dict[str, str] | None = None) -> Iterator[int]:
    """`foldwise serve` (one worker) on `url`; yields its port. Tracebacks in its log raise."""
    with tempfile.TemporaryDirectory(prefix="foldwise-server-") as directory:
        server = Server(url, Path(directory))
        for name in TEST_ONLY_ENV:
            server.env.pop(name)
        server.env.update(env or {})
        try:
            yield server.start().port
        finally:
            server.stop()
        if "Traceback" in (log := server.log.read_text("utf-8", "replace")):
            raise RuntimeError(f"the server logged errors: {log[-800:]}")


def require_wrk() -> None:
    if shutil.which("wrk") is None:
        raise SystemExit("bench: wrk is missing: `apt-get install -y wrk` (make bench does)")


def wrk_rps(port: int, path: str, *, connections: int, seconds: float) -> float:
    """Requests per second of `wrk -t1` on GET `path` (raises on any error)."""
    command = ["wrk", "-t1", f"-c{connections}", f"-d{seconds}s", "--timeout", "30s"]
    command += ["-s", str(HERE / "wrk.lua"), f"http://127.0.0.1:{port}{path}"]
    out = subprocess.run(command, capture_output=True, text=True, timeout=seconds + 30, check=True)
    load = json.loads(out.stdout.strip().splitlines()[-1])
    if load["errors"] or not load["requests"]:
        raise RuntimeError(f"wrk saw {load['errors']} errors on {path}: {out.stdout[-400:]}")
    return float(load["requests"] / load["seconds"])


@dataclass(frozen=True, slots=True)
class Target:
    figure: str
    value: float
    goal: float
    at_most: bool = False

    @property
    def met(self) -> bool:
        return self.value <= self.goal if self.at_most else self.value >= self.goal

    def row(self) -> list[str]:
        goal = f"{'≤' if self.at_most else '≥'} {self.goal}"
        return [self.figure, goal, f"{self.value:.3g}", "**met**" if self.met else "**missed**"]


def publish(section: str, targets: list[Target]) -> None:
    """Print a bench's section and its targets, and write the section to docs/benchmarks.md."""
    print(section, targets_table(targets), sep="\n\n")
    write(section)


def targets_table(targets: list[Target]) -> str:
    return table(["Figure (ratio, same run)", "Target", "Measured", "Verdict"],
                 [t.row() for t in targets], "llrl")  # fmt: skip


def render(template: str | Path, **values: Any) -> str:
    """`template` (a name in bench/, or a path) with its `$name` placeholders filled."""
    return Template((HERE / template).read_text("utf-8")).substitute(values)


def table(header: list[str], rows: list[list[Any]], align: str = "") -> str:
    """A Markdown table; `align` gives a column's alignment by letter (l or r), left by default."""
    marks = ["---:" if a == "r" else "---" for a in align.ljust(len(header), "l")]
    lines = [header, marks, *rows]
    return "\n".join("| " + " | ".join(str(cell) for cell in line) + " |" for line in lines)


def _sections(text: str) -> list[str]:
    return re.split(r"(?m)^(?=## )", text)


def write(text: str, path: Path = DOC) -> None:
    """Replace the head and each `## ` section of `path` that `text` has; append new ones."""
    new = _sections(text.strip() + "\n")
    old = _sections(path.read_text("utf-8")) if path.exists() else [""]
    titles = {part.split("\n", 1)[0]: part for part in new[1:]}
    merged = [new[0] if new[0].strip() else old[0]]
    for part in old[1:]:
        merged.append(titles.pop(part.split("\n", 1)[0], part))
    merged += titles.values()
    path.write_text("".join(p.rstrip() + "\n\n" for p in merged).rstrip() + "\n", "utf-8")


def machine() -> dict[str, str]:
    def git(*args: str) -> str:
        return subprocess.run(["git", *args], capture_output=True, text=True).stdout.strip()

    cpu = next(
        (line.split(":", 1)[1].strip() for line in Path("/proc/cpuinfo").read_text().splitlines()
         if line.startswith("model name")),
        platform.processor(),
    )  # fmt: skip
    dirty = " (with uncommitted changes)" if git("status", "--porcelain", "-uno") else ""
    return {
        "date": datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC"),
        "commit": git("rev-parse", "--short", "HEAD") + dirty,
        "python": platform.python_version(),
        "cores": str(len(os.sched_getaffinity(0))),
        "cpu": cpu,
        "load": " / ".join(f"{value:.2f}" for value in os.getloadavg()),
    }
