"""Conditional UPDATEs behind the fold: a lease so one worker pays for the summarizer call,
and a compare-and-swap so a fold commits only on the summary version it was planned on.

Both are single statements whose WHERE clause carries the whole precondition, so they are
race-free on SQLite (one writer at a time) and PostgreSQL (the row lock taken by UPDATE)
alike, across any number of server processes. Every method runs inside the caller's
transaction; the caller commits at once (a lease must be visible before the slow call).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from datetime import datetime
from typing import Any, Literal, cast

from sqlalchemy import CursorResult, select, update
from sqlalchemy.ext.asyncio import AsyncSession

from app.models import Session, Summary
from app.schemas.common import SummaryState

LeaseClaim = Literal["claimed", "taken_over"]

# The session row's column for each field of its summary: what a fold sets and what a read
# returns (the version aside, which only the fold's compare-and-swap moves).
SUMMARY_COLUMNS = {
    "text": "conversation_summary",
    "through_id": "summary_through_id",
    "through_seq": "summary_through_seq",
    "message_count": "summary_message_count",
    "tokens": "summary_tokens",
    "method": "summary_method",
}


@dataclass(frozen=True, slots=True)
class LeaseState:
    summary_version: int
    lease_owner: str | None
    lease_until: datetime | None


@dataclass(frozen=True, slots=True)
class NewSummary:
    """Everything a fold (or a clear) writes: the session's state and its history row."""

    text: str | None
    through_id: str | None
    through_seq: int
    message_count: int
    tokens: int
    method: str
    model: str | None = None
    tokens_in: int = 0
    tokens_out: int = 0
    usage: dict[str, Any] | None = None
    """The model call's billed tokens and prompt kind (SummaryResult.usage_record)."""
    stats: dict[str, Any] | None = None

    def columns(self) -> dict[str, Any]:
        """The session row's summary columns this summary sets (the version aside)."""
        return {column: getattr(self, field) for field, column in SUMMARY_COLUMNS.items()}

    def state(self, version: int) -> SummaryState:
        """This summary as the session holds it at `version`."""
        fields = {field: getattr(self, field) for field in SUMMARY_COLUMNS}
        return SummaryState(version=version, **fields)


def _rowcount(result: Any) -> int:
    assert isinstance(result, CursorResult)
    return int(result.rowcount)


class FoldRepository:
    def __init__(self, db: AsyncSession) -> None:
        self.db = db

    async def lease_state(self, session_pk: int) -> LeaseState | None:
        stmt = select(
            Session.summary_version, Session.fold_lease_owner, Session.fold_lease_until
        ).where(Session.pk == session_pk)
        row = (await self.db.execute(stmt)).one_or_none()
        return LeaseState(row[0], row[1], row[2]) if row is not None else None

    async def claim_lease(
        self, session_pk: int, *, version: int, owner: str, now: datetime, until: datetime
    ) -> LeaseClaim | None:
        """Take the fold lease if the version is still `version` and no live lease exists:
        `claimed` a free one, `taken_over` one that lapsed (its worker crashed or stalled);
        None when a live lease or a newer version stands. The second statement runs only
        when the first found the lease held."""
        for claim, free in (
            ("claimed", Session.fold_lease_until.is_(None)),
            ("taken_over", Session.fold_lease_until < now),
        ):
            stmt = (
                update(Session)
                .where(Session.pk == session_pk, Session.summary_version == version, free)
                .values(
                    fold_lease_owner=owner, fold_lease_until=until, updated_at=Session.updated_at
                )
                .execution_options(synchronize_session=False)
            )
            if _rowcount(await self.db.execute(stmt)) == 1:
                return cast(LeaseClaim, claim)
        return None

    async def renew_lease(self, session_pk: int, *, owner: str, until: datetime) -> bool:
        """Extend our lease while the summarizer runs; False when it is no longer ours."""
        stmt = (
            update(Session)
            .where(Session.pk == session_pk, Session.fold_lease_owner == owner)
            .values(fold_lease_until=until, updated_at=Session.updated_at)
        )
        return _rowcount(await self.db.execute(stmt)) == 1

    async def release_lease(self, session_pk: int, *, owner: str) -> None:
        """Give the lease back (the summarizer failed); a no-op if someone took it over."""
        stmt = (
            update(Session)
            .where(Session.pk == session_pk, Session.fold_lease_owner == owner)
            .values(fold_lease_owner=None, fold_lease_until=None, updated_at=Session.updated_at)
            .execution_options(synchronize_session=False)
        )
        await self.db.execute(stmt)

    async def swap_summary(
        self, session_pk: int, *, version: int, owner: str, new: NewSummary
    ) -> bool:
        """Compare-and-swap: write `new` as version+1 if still at `version` under our lease.

        The history row goes in the same transaction, so both or neither are stored.
        """
        stmt = (
            update(Session)
            .where(
                Session.pk == session_pk,
                Session.summary_version == version,
                Session.fold_lease_owner == owner,
                # through only moves forward (a clear in between would have moved the version).
                Session.summary_through_seq <= new.through_seq,
            )
            .values(
                **new.columns(),
                summary_version=version + 1,
                fold_lease_owner=None,
                fold_lease_until=None,
                updated_at=Session.updated_at,
            )
            .execution_options(synchronize_session=False)
        )
        if _rowcount(await self.db.execute(stmt)) != 1:
            return False
        self.add_history(session_pk, version + 1, new)
        await self.db.flush()
        return True

    async def clear(self, session_pk: int, *, last_seq: int, through_id: str | None) -> int:
        """A fold to an empty summary through `last_seq`; returns the new version.

        Bumping the version also defeats any fold in flight: its compare-and-swap fails.
        """
        cleared = NewSummary(
            text=None,
            through_id=through_id,
            through_seq=last_seq,
            message_count=0,
            tokens=0,
            method="clear",
            stats={"trigger": "clear"},
        )
        stmt = (
            update(Session)
            .where(Session.pk == session_pk)
            .values(
                **cleared.columns(),
                summary_version=Session.summary_version + 1,
                cleared_through_seq=last_seq,
                live_tokens=0,
                live_removed=0,
                fold_lease_owner=None,
                fold_lease_until=None,
            )
            .returning(Session.summary_version)
            .execution_options(synchronize_session=False)
        )
        version = int((await self.db.execute(stmt)).scalar_one())
        self.add_history(session_pk, version, cleared)
        await self.db.flush()
        return version

    def add_history(self, session_pk: int, version: int, new: NewSummary) -> None:
        """The summaries-table row of `new` at `version`: every field of it."""
        fields = asdict(new) | {"stats": dict(new.stats or {})}
        self.db.add(Summary(session_id=session_pk, version=version, **fields))
