"""Data lifecycle benchmark: export and import of a long session, and `foldwise copy`.

`python -m bench.lifecycle` (part of `make bench`; `--skip-postgres`, `--copy-messages N`):
sessions of 10k and 100k messages (bench/seed.py: agent turns, already folded) are exported
to a JSONL file, deleted and imported back from it, on SQLite and PostgreSQL, in process
(the service functions the routes and the CLI call). Messages per second are timed without
tracing; the peak is the largest Python allocation (tracemalloc) during a second, traced run:
it must not grow with the session. Then `foldwise copy` moves 1M messages (10 sessions) from
a SQLite file to PostgreSQL, verification included. Writes its section of docs/benchmarks.md.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import tempfile
import time
import tracemalloc
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

from app.core.db import create_engine, create_sessionmaker, session_scope
from app.core.security import OPEN_TENANT
from app.core.settings import Settings
from app.repositories import SessionRepository
from app.services.copy import DatabaseCopy
from app.services.transfer import SessionImporter, open_export
from app.tokens.registry import load_registry
from bench import doc
from bench.seed import seed_folded_session
from bench.servers import database, postgres_missing

SIZES = (10_000, 100_000)
COPY_MESSAGES, COPY_SESSIONS = 1_000_000, 10


async def _lines(path: Path) -> AsyncIterator[bytes]:
    with path.open("rb") as source:
        for line in source:
            yield line


async def _export(url: str, session_id: str, path: Path) -> None:
    engine = create_engine(url)
    try:
        with path.open("w", encoding="utf-8") as out:
            registry = load_registry(Settings())
            async for line in await open_export(
                create_sessionmaker(engine), OPEN_TENANT, session_id, registry
            ):
                out.write(line)
    finally:
        await engine.dispose()


async def _reimport(url: str, session_id: str, path: Path) -> None:
    """Delete the session, then import it back from its export."""
    settings = Settings()
    engine = create_engine(url)
    try:
        maker = create_sessionmaker(engine)
        async with session_scope(maker) as db:
            repo = SessionRepository(db, OPEN_TENANT)
            await repo.delete(await repo.get_or_raise(session_id))
        async with session_scope(maker) as db:
            importer = SessionImporter(db, OPEN_TENANT, settings, load_registry(settings))
            result = await importer.run(_lines(path))
        assert result.status == "created", result
    finally:
        await engine.dispose()


def _timed(work: Any) -> float:
    started = time.perf_counter()
    asyncio.run(work())
    return time.perf_counter() - started


def _peak(work: Any) -> int:
    tracemalloc.start()
    try:
        asyncio.run(work())
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def transfer(backend: str, size: int) -> dict[str, Any]:
    with database(backend) as url, tempfile.TemporaryDirectory() as directory:
        asyncio.run(seed_folded_session(url, "long", size))
        path = Path(directory) / "long.jsonl"
        figures: dict[str, Any] = {}
        for name, work in (
            ("export", lambda: _export(url, "long", path)),
            ("import", lambda: _reimport(url, "long", path)),
        ):
            seconds = _timed(work)
            figures[name] = {"per_s": size / seconds, "peak": _peak(work)}
        figures["bytes"] = path.stat().st_size
    return figures


def copy(messages: int) -> dict[str, float]:
    per_session = messages // COPY_SESSIONS
    with database("SQLite") as source, database("PostgreSQL") as target:
        for number in range(COPY_SESSIONS):
            asyncio.run(seed_folded_session(source, f"s{number}", per_session))

        async def run() -> None:
            engines = [create_engine(source), create_engine(target)]
            try:
                report = await DatabaseCopy(*map(create_sessionmaker, engines)).run()
                assert not report.mismatched and report.messages == messages, report
            finally:
                for engine in engines:
                    await engine.dispose()

        seconds = _timed(run)
    return {"messages": messages, "seconds": seconds, "per_s": messages / seconds}


def section(rows: list[list[Any]], copied: dict[str, float] | None, skipped: str | None) -> str:
    table = doc.table(
        [
            "database",
            "messages",
            "export msg/s",
            "export peak",
            "import msg/s",
            "import peak",
            "file",
        ],
        rows,
        "lrrrrrr",
    )
    if copied:
        copy_line = (
            f"`foldwise copy` SQLite → PostgreSQL, {copied['messages']:,.0f} messages in "
            f"{COPY_SESSIONS} sessions, verification included: {copied['seconds']:.0f} s, "
            f"{copied['per_s']:,.0f} messages/s."
        )
    else:
        copy_line = f"`foldwise copy` not measured: PostgreSQL unreachable ({skipped})."
    machine = doc.machine()
    return (
        "## Data lifecycle: export, import, copy\n\n"
        + __doc__.split("\n\n", 1)[1].strip()
        + f"\n\n{table}\n\n{copy_line}\n\n"
        + f"Run {machine['date']}, commit {machine['commit']}, {machine['cores']} cores "
        + f"({machine['cpu']}), load {machine['load']}.\n"
    )


def _mb(value: float) -> str:
    return f"{value / 2**20:.1f} MB"


def measure(skip_postgres: bool, copy_messages: int = COPY_MESSAGES) -> str:
    """The section of docs/benchmarks.md (`make bench` appends it to its report)."""
    skipped = "--skip-postgres" if skip_postgres else postgres_missing()
    backends = ["SQLite"] if skipped else ["SQLite", "PostgreSQL"]
    rows = []
    for backend in backends:
        for size in SIZES:
            f = transfer(backend, size)
            rows.append(
                [
                    backend,
                    f"{size:,}",
                    f"{f['export']['per_s']:,.0f}",
                    _mb(f["export"]["peak"]),
                    f"{f['import']['per_s']:,.0f}",
                    _mb(f["import"]["peak"]),
                    _mb(f["bytes"]),
                ]
            )
            print(rows[-1], flush=True)
    copied = None if skipped else copy(copy_messages)
    return section(rows, copied, skipped)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--skip-postgres", action="store_true")
    parser.add_argument("--copy-messages", type=int, default=COPY_MESSAGES)
    args = parser.parse_args(argv)
    text = measure(args.skip_postgres, args.copy_messages)
    print(text)
    doc.write(text)
    return 0


if __name__ == "__main__":
    os.environ.setdefault("FOLDWISE_LOG_LEVEL", "warning")
    raise SystemExit(main())
