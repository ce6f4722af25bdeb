"""The data lifecycle commands of `foldwise` (registered by app/cli.py): export, import,
purge, copy. Each works on the database directly (FOLDWISE_DATABASE_URL), with no server
and no request size limit, in the same units of work as the HTTP routes."""

from __future__ import annotations

import argparse
import asyncio
import json
import re
import sys
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from contextlib import contextmanager
from datetime import timedelta
from typing import IO, Any

from app.core.settings import Settings

COMMANDS = ("export", "import", "purge", "copy")
_DURATION = re.compile(r"^(\d{1,6})([dhm])$")
_UNITS = {"d": "days", "h": "hours", "m": "minutes"}


def duration(text: str) -> timedelta:
    """`30d`, `12h` or `90m`."""
    match = _DURATION.match(text.strip())
    if not match:
        raise argparse.ArgumentTypeError(f"{text!r} is not a duration such as 30d, 12h or 90m")
    return timedelta(**{_UNITS[match[2]]: int(match[1])})


def add_commands(commands: Any) -> None:
    export = commands.add_parser("export", help="write a session as JSONL (stdout or --output)")
    export.add_argument("session_id")
    export.add_argument("--tenant", default="default")
    export.add_argument("--output", "-o", default="-", help="file to write; '-' = stdout")

    load = commands.add_parser("import", help="restore a session from its JSONL export")
    load.add_argument("file", help="the export; '-' = stdin")
    load.add_argument("--tenant", default="default")

    purge = commands.add_parser("purge", help="delete sessions idle too long, or by id prefix")
    purge.add_argument("--older-than", type=duration, help="idle longer than this: 30d, 12h")
    purge.add_argument("--prefix", help="ids starting with this (needs --tenant)")
    purge.add_argument("--tenant", help="only this tenant's sessions (default: every tenant)")
    purge.add_argument("--dry-run", action="store_true", help="count, delete nothing")

    copy = commands.add_parser("copy", help="copy every tenant's data to another database")
    copy.add_argument("--from", dest="source", required=True, help="e.g. sqlite:///foldwise.db")
    copy.add_argument("--to", dest="target", required=True, help="e.g. postgresql://…/foldwise")


def run(args: argparse.Namespace, settings: Settings) -> int:
    if args.command == "export":
        with _opened(args.output, "w") as out:
            return _on_database(settings.database_url, lambda m: _export(m, args, settings, out))
    if args.command == "import":
        with _opened(args.file, "rb") as source:
            return _on_database(settings.database_url, lambda m: _import(m, args, settings, source))
    if args.command == "purge":
        if args.older_than is None and not args.prefix:
            raise ValueError("purge needs --older-than and/or --prefix")
        if args.prefix and not args.tenant:
            raise ValueError("--prefix deletes one tenant's sessions: give --tenant")
        return _on_database(settings.database_url, lambda m: _purge(m, args, settings))
    return _copy(args.source, args.target)


Maker = Any  # async_sessionmaker[AsyncSession]


def _on_database(url: str, work: Callable[[Maker], Awaitable[int]]) -> int:
    from app.core.db import create_engine, create_sessionmaker, upgrade_database

    upgrade_database(url)

    async def main() -> int:
        engine = create_engine(url)
        try:
            return await work(create_sessionmaker(engine))
        finally:
            await engine.dispose()

    return asyncio.run(main())


@contextmanager
def _opened(path: str, mode: str) -> Iterator[IO[Any]]:
    """The file at `path`, or stdin / stdout for '-'."""
    if path == "-":
        yield (sys.stdin.buffer if "r" in mode else sys.stdout)
        return
    with open(path, mode, encoding=None if "b" in mode else "utf-8") as stream:
        yield stream


async def _export(maker: Maker, args: argparse.Namespace, settings: Settings, out: IO[str]) -> int:
    from app.services.transfer import open_export
    from app.tokens.registry import load_registry

    registry = load_registry(settings)
    async for line in await open_export(maker, args.tenant, args.session_id, registry):
        out.write(line)
    return 0


async def _lines(source: IO[bytes]) -> AsyncIterator[bytes]:
    for line in source:
        yield line


async def _import(
    maker: Maker, args: argparse.Namespace, settings: Settings, source: IO[bytes]
) -> int:
    from app.core.db import session_scope
    from app.services.transfer import SessionImporter
    from app.tokens.registry import load_registry

    async with session_scope(maker) as db:
        importer = SessionImporter(db, args.tenant, settings, load_registry(settings))
        result = await importer.run(_lines(source))
    print(json.dumps(result.model_dump()))
    return 0


async def _purge(maker: Maker, args: argparse.Namespace, settings: Settings) -> int:
    from app.models.base import utcnow
    from app.repositories.retention import Expiry
    from app.services.retention import count_expired, delete_expired

    # --prefix alone: every session of the prefix (idle for more than no time at all).
    expiry = Expiry(
        now=utcnow(),
        older_than=args.older_than or timedelta(0),
        tenant=args.tenant,
        id_prefix=args.prefix,
    )
    if args.dry_run:
        found = await count_expired(maker, expiry)
        print(f"would delete {found.sessions} sessions ({found.messages} messages)")
        return 0
    done = await delete_expired(maker, expiry, settings.retention_batch, sys.maxsize)
    print(f"deleted {done.sessions} sessions ({done.messages} messages)")
    return 0


def _copy(source: str, target: str) -> int:
    from app.core.db import create_engine, create_sessionmaker, upgrade_database
    from app.services.copy import DatabaseCopy

    upgrade_database(target)

    async def main() -> int:
        engines = [create_engine(source), create_engine(target)]
        try:
            makers = [create_sessionmaker(engine) for engine in engines]
            report = await DatabaseCopy(*makers, progress=_progress).run()
        finally:
            for engine in engines:
                await engine.dispose()
        print(
            f"copied {report.sessions} sessions ({report.messages} messages, "
            f"{report.summaries} summaries) and {report.shared_rows} calibration/cache rows; "
            f"{report.sessions - len(report.mismatched)} verified"
        )
        for name in report.mismatched:
            print(
                f"foldwise: {name}: counts or checksum differ; run the copy again", file=sys.stderr
            )
        return 1 if report.mismatched else 0

    return asyncio.run(main())


def _progress(text: str) -> None:
    print(text, file=sys.stderr)
