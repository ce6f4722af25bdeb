"""Conditional UPDATEs behind the fold: a lease so one worker pays for the summarizer call,
and a compare-and-swap so a fold commits only on the summary version it was planned on.

Both are single statements whose WHERE clause carries the whole precondition, so they are
race-free on SQLite (one writer at a time) and PostgreSQL (the row lock taken by UPDATE)
alike, across any number of server processes. Every method runs inside the caller's
transaction; the caller commits at once (a lease must be visible before the slow call).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any, Literal, cast

from sqlalchemy import CursorResult, select, update
from sqlalchemy.ext.asyncio import AsyncSession

from app.models import Session, Summary
from app.schemas.common import SummaryState

LeaseClaim = Literal["claimed", "taken_over"]


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
    stats: dict[str, Any] | None = None

    def columns(self) -> dict[str, Any]:
        """The session row's summary columns this summary sets (the version aside)."""
        return {
            "conversation_summary": self.text,
            "summary_through_id": self.through_id,
            "summary_through_seq": self.through_seq,
            "summary_message_count": self.message_count,
            "summary_tokens": self.tokens,
            "summary_method": self.method,
        }

    def state(self, version: int) -> SummaryState:
        """This summary as the session holds it at `version`."""
        return SummaryState(
            text=self.text,
            version=version,
            through_id=self.through_id,
            through_seq=self.through_seq,
            message_count=self.message_count,
            tokens=self.tokens,
            method=self.method,
        )


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
        self.db.add(
            Summary(
                session_id=session_pk,
                version=version,
                text=new.text,
                through_id=new.through_id,
                through_seq=new.through_seq,
                message_count=new.message_count,
                tokens=new.tokens,
                method=new.method,
                model=new.model,
                tokens_in=new.tokens_in,
                tokens_out=new.tokens_out,
                stats=dict(new.stats or {}),
            )
        )
