"""A context's reads: what the engine needs of a session, in one short read-only snapshot.

Loading stays flat in the session's length: the engine needs only the messages after the
summary (`seq > summary_through_seq`) and the pinned first user message, both read on the
(session_id, seq) index with stored token counts (never re-counted). `messages_total` comes
from the gap-free seq counter (`last_seq − cleared_through_seq`). `explain=true` also lists
the messages the summary covers: read as id, seq and tokens only, and never given to the
engine, so an explained context of a long session costs one narrow index read more. After
appends, a snapshot of the same session (`base`, kept by the response cache) lends its
messages and only the new ones are read.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from app.core.context_settings import SETTINGS_KEYS, ContextSettings, resolve_settings
from app.core.db import read_scope
from app.core.metrics import CONTEXT_LOADS
from app.core.settings import Settings
from app.engine.assemble import Mode
from app.engine.calibration import Calibration
from app.engine.render import Format
from app.engine.types import Message
from app.engine.units import is_user_turn
from app.models import Session
from app.repositories.context import (
    MAX_PINNED_PAGE,
    PINNED_PAGE,
    ContextRepository,
    Covered,
    SessionVersion,
    session_version,
)
from app.repositories.context_rows import (
    ContextReads,
    DriverSnapshot,
    NotInSnapshot,
    TooLongForTheLoop,
)
from app.schemas.common import SummaryState
from app.schemas.context import ContextRequest
from app.services.sessions import stored_summary
from app.tokens.registry import ModelRegistry


@dataclass(frozen=True, slots=True)
class ContextOptions:
    model: str | None = None
    max_tokens: int | None = None
    format: Format = "anthropic"
    mode: Mode = "auto"
    explain: bool = False
    overrides: dict[str, Any] = dataclasses.field(default_factory=dict)
    focus: str | None = None
    trigger: str | None = None  # history-row trigger; default from the mode
    record_served: bool = True  # remember the estimate for POST …/usage (not for a manual fold)
    dry_run: bool = False  # the fold this request would make, computed and never stored


def context_options(
    request: ContextRequest, *, preview: bool = False, dry_run: bool = False
) -> ContextOptions:
    """What GET …/context (with its `preview` and `dry_run`) and a turn ask to be served."""
    return ContextOptions(
        model=request.model,
        max_tokens=request.max_tokens,
        format=request.format,
        mode="never" if preview else request.summarize,
        explain=request.explain,
        overrides=request.model_dump(include=set(SETTINGS_KEYS), exclude_none=True),
        record_served=not (preview or dry_run),
        dry_run=dry_run,
    )


@dataclass(frozen=True, slots=True)
class Snapshot:
    """What one short read transaction saw."""

    pk: int
    external_id: str
    session_model: str
    system_prompt: str | None
    tools: tuple[dict[str, Any], ...] | None
    context_settings: ContextSettings
    summary: SummaryState
    """The session's summary; version 0 (text None) before the first fold."""
    messages_total: int
    messages: tuple[Message, ...]
    calibration: Calibration | None
    last_served: dict[str, Any]
    version: SessionVersion  # validates a cached response (app/services/response_cache.py)
    removed: int  # messages removed after the clear marker (DELETE …/messages/last)
    explain: bool
    covered: tuple[Covered, ...] = ()
    """With explain: the messages after the clear marker the summary covers (the pinned one
    too, which `messages` holds as well)."""

    @property
    def summary_read(self) -> SummaryState | None:
        """The wire `summary`: null before the first fold."""
        return self.summary if self.summary.version else None

    @property
    def ratio(self) -> float:
        """The calibration ratio of the model's family (1.0 before any usage report)."""
        return self.calibration.ratio if self.calibration else 1.0


def _extends(base: Snapshot | None, row: Session, explain: bool, pin: bool | None = None) -> bool:
    """Whether `row` is `base`'s session with only appends since: the same summary, clear
    marker and removals, and (the pinned message is in `base.messages`) the same `pin`
    setting (None: not known yet)."""
    return (
        base is not None
        and base.pk == row.pk
        and base.explain == explain
        and base.summary.version == row.summary_version
        and base.version.cleared_through_seq == row.cleared_through_seq
        and base.removed == row.live_removed
        and base.version.last_seq <= row.last_seq
        and pin in (None, base.context_settings.pin_first_message)
    )


@dataclass(frozen=True, slots=True)
class SnapshotLoader:
    """Reads snapshots for one tenant: through the database driver when `driver_snapshot`
    (app/repositories/context_rows.py) is given and the read is short, else through
    SQLAlchemy."""

    sessionmaker: async_sessionmaker[AsyncSession]
    tenant: str
    settings: Settings
    registry: ModelRegistry
    driver_snapshot: DriverSnapshot | None

    async def load(
        self, session_id: str, options: ContextOptions, base: Snapshot | None = None
    ) -> Snapshot:
        """What the engine needs of `session_id` (see the module docstring). With `base`, a
        snapshot of the same session, only the messages appended since are read."""
        # The same reads through the driver itself; explain's covered rows go the ORM's way.
        if self.driver_snapshot is not None and not options.explain:
            after = base.version.last_seq if base is not None else 0
            try:
                async with self.driver_snapshot(after) as reads:
                    row, calibrations = await reads.session_for_context(self.tenant, session_id)
                    floor = max(row.summary_through_seq, row.cleared_through_seq)
                    if _extends(base, row, options.explain):
                        floor = max(floor, after)
                    if reads.takes(row.last_seq - floor):
                        return await self._snapshot(reads, row, calibrations, options, base)
            except (TooLongForTheLoop, NotInSnapshot):
                pass
        async with read_scope(self.sessionmaker) as db:
            repo = ContextRepository(db)
            row, calibrations = await repo.session_for_context(self.tenant, session_id)
            return await self._snapshot(repo, row, calibrations, options, base)

    async def _snapshot(
        self,
        repo: ContextReads,
        row: Session,
        calibrations: dict[str, Calibration],
        options: ContextOptions,
        base: Snapshot | None,
    ) -> Snapshot:
        info = self.registry.get(options.model or row.model)
        context_settings = resolve_settings(self.settings, row.settings, options.overrides)
        pin = context_settings.pin_first_message
        if base is not None and _extends(base, row, options.explain, pin):
            # Only appends since `base`: its messages, then the new ones (one indexed read).
            new = await repo.messages_after(row.pk, base.version.last_seq)
            messages, covered = [*base.messages, *new], base.covered
            CONTEXT_LOADS.labels("appended").inc()
        else:
            messages = await self._messages(repo, row, context_settings)
            covered = ()
            if options.explain:  # never read through the driver (`_load`)
                assert isinstance(repo, ContextRepository)
                floor = max(row.summary_through_seq, row.cleared_through_seq)
                covered = tuple(await repo.covered(row.pk, row.cleared_through_seq, floor))
            CONTEXT_LOADS.labels("full").inc()
        calibration = calibrations.get(info.family)
        return Snapshot(
            pk=row.pk,
            external_id=row.external_id,
            session_model=row.model,
            system_prompt=row.system_prompt,
            tools=tuple(row.tools) if row.tools else None,
            context_settings=context_settings,
            summary=stored_summary(row),
            messages_total=row.last_seq - row.cleared_through_seq - row.live_removed,
            messages=tuple(messages),
            calibration=calibration,
            last_served=dict(row.last_context or {}),
            version=session_version(row),
            removed=row.live_removed,
            explain=options.explain,
            covered=covered,
        )

    @staticmethod
    async def _messages(
        repo: ContextReads, row: Session, settings: ContextSettings
    ) -> list[Message]:
        """The messages the engine needs: those after the summary, and the pinned one."""
        floor = max(row.summary_through_seq, row.cleared_through_seq)
        live = await repo.messages_after(row.pk, floor)
        if not settings.pin_first_message or floor <= row.cleared_through_seq:
            return live
        pinned = await SnapshotLoader._pinned(repo, row, floor)
        return [pinned, *live] if pinned else live

    @staticmethod
    async def _pinned(repo: ContextReads, row: Session, floor: int) -> Message | None:
        """The first pinnable user message the summary covers, or None."""
        cursor, limit = row.cleared_through_seq, PINNED_PAGE
        while page := await repo.user_messages_page(
            row.pk, after_seq=cursor, through_seq=floor, limit=limit
        ):
            for candidate in page:
                if is_user_turn(candidate):
                    return candidate
            cursor, limit = page[-1].seq, min(2 * limit, MAX_PINNED_PAGE)
        return None


__all__ = ["ContextOptions", "Snapshot", "SnapshotLoader", "context_options"]
