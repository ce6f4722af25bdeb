"""`foldwise copy`: every tenant's data from one database to another (SQLite to PostgreSQL,
the way to outgrow the embedded default), streamed, resumable and verified.

Sessions are copied one by one in pk order; each session's messages and summaries in pages
of PAGE_ROWS, each page committed on the target. A copy that stops (crash, Ctrl-C) is run
again: a session already on the target continues after its newest stored seq and version,
and its row takes the source's values. Every session is then verified by its message and
summary counts and checksum (app/services/transfer.py) on both sides. Calibrations and the
summary cache follow, keyed as on the source. Stop the writers of the source first: a session
written during the copy can fail its verification (run the copy again to bring it over).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from app.core.db import read_scope, session_scope
from app.models import Calibration, SummaryCacheEntry
from app.repositories.transfer import TransferRepository
from app.services.transfer import (
    PAGE_ROWS,
    Checksum,
    row_record,
    session_record,
    stored_checksum,
)

Maker = async_sessionmaker[AsyncSession]


@dataclass
class CopyReport:
    sessions: int = 0
    messages: int = 0
    summaries: int = 0
    shared_rows: int = 0
    mismatched: list[str] = field(default_factory=list)
    """tenant/id of sessions whose counts or checksum differ after the copy."""


class DatabaseCopy:
    def __init__(
        self, source: Maker, target: Maker, *, progress: Callable[[str], None] | None = None
    ) -> None:
        self.source = source
        self.target = target
        self.progress = progress or (lambda _: None)
        self.report = CopyReport()

    async def run(self) -> CopyReport:
        after = 0
        while True:
            async with read_scope(self.source) as db:
                page = await TransferRepository(db).sessions_after(after, PAGE_ROWS)
            for pk, tenant, session_id in page:
                await self._session(pk, tenant, session_id)
            if len(page) < PAGE_ROWS:
                break
            after = page[-1][0]
        for model in (Calibration, SummaryCacheEntry):
            await self._shared(model)
        return self.report

    async def _session(self, source_pk: int, tenant: str, session_id: str) -> None:
        async with read_scope(self.source) as db:
            found = await TransferRepository(db).session_row(tenant, session_id)
        if found is None:  # deleted on the source meanwhile
            return
        _, row = found
        async with session_scope(self.target) as db:
            target = TransferRepository(db)
            stored = await target.session_row(tenant, session_id)
            if stored is None:
                target_pk, seq, version = await target.insert_session(tenant, session_id, row), 0, 0
            else:
                target_pk = stored[0]
                seq, version = await target.newest(target_pk)
                await target.replace_session(target_pk, row)
        # Copied from the start, the source's checksum is taken from the rows as they pass;
        # resumed, the source is read again for it.
        checksum = Checksum() if (seq, version) == (0, 0) else None
        if checksum:
            checksum.add(session_record(session_id, row))
        self.report.messages += await self._pages("message", source_pk, target_pk, seq, checksum)
        self.report.summaries += await self._pages(
            "summary", source_pk, target_pk, version, checksum
        )
        self.report.sessions += 1
        source_end = checksum.end() if checksum else None
        if not await self._verified(source_pk, target_pk, session_id, row, source_end):
            self.report.mismatched.append(f"{tenant}/{session_id}")
        if self.report.sessions % 100 == 0:
            self.progress(f"{self.report.sessions} sessions, {self.report.messages} messages")

    async def _pages(
        self, kind: str, source_pk: int, target_pk: int, after: int, checksum: Checksum | None
    ) -> int:
        """Copy the session's messages or summaries after seq / version `after`, a page per
        target transaction; how many."""
        copied = 0
        key = "seq" if kind == "message" else "version"
        while True:
            async with read_scope(self.source) as db:
                reader = TransferRepository(db)
                read = reader.messages_after if kind == "message" else reader.summaries_after
                page = await read(source_pk, after, PAGE_ROWS)
            if not page:
                return copied
            async with session_scope(self.target) as db:
                writer = TransferRepository(db)
                write = writer.insert_messages if kind == "message" else writer.insert_summaries
                await write(target_pk, page)
            if checksum is not None:
                for row in page:
                    checksum.add(row_record(kind, row))
            copied += len(page)
            after = page[-1][key]

    async def _verified(
        self,
        source_pk: int,
        target_pk: int,
        session_id: str,
        row: Any,
        source_end: dict[str, Any] | None,
    ) -> bool:
        """Counts and checksum of the session as stored on the target equal the source's."""
        ends = [source_end] if source_end else []
        pairs = ((self.source, source_pk), (self.target, target_pk))[len(ends) :]
        for maker, pk in pairs:
            async with read_scope(maker, repeatable=True) as db:
                repo = TransferRepository(db)
                stored = await repo.session_row_by_pk(pk)
                ends.append(await stored_checksum(repo, pk, session_id, stored or row))
        return ends[0] == ends[1]

    async def _shared(self, model: Any) -> None:
        after: tuple[Any, ...] | None = None
        while True:
            async with read_scope(self.source) as db:
                page = await TransferRepository(db).shared_rows(model, after, PAGE_ROWS)
            async with session_scope(self.target) as db:
                await TransferRepository(db).upsert_shared(model, page)
            self.report.shared_rows += len(page)
            if len(page) < PAGE_ROWS:
                return
            keys = [c.name for c in model.__table__.primary_key.columns]
            after = tuple(page[-1][k] for k in keys)
