"""Summary use cases beside the context: manual fold, history, clear.

- POST …/summarize folds now, like `summarize=force` (all but the last `keep_recent`, the
  pinned message and a pending call), with optional `focus` instructions. With nothing left
  to fold it answers 200 `folded: false` and the current summary unchanged (idempotent: a
  double click does not pay for a second summary).
- POST …/clear is a fold to an empty summary: through = the newest message, text null,
  version + 1, a history row with method `clear`; messages after it start a fresh context.
"""

from __future__ import annotations

from typing import Any

from sqlalchemy.ext.asyncio import AsyncSession

from app.core.cursors import decode_cursor, encode_cursor
from app.core.logging import get_logger, log_event
from app.repositories.folds import FoldRepository
from app.repositories.messages import MessageRepository
from app.repositories.sessions import SessionRepository
from app.repositories.summaries import SummaryRepository
from app.schemas.sessions import SessionRead
from app.schemas.summaries import (
    SessionSummarizeRequest,
    SessionSummarizeResponse,
    SummaryHistoryItem,
    SummaryHistoryPage,
)
from app.services.context import ContextAssembler, ContextOptions
from app.services.sessions import session_read

log = get_logger("foldwise.clear")

CURSOR_KIND = "v1"  # summary history, newest version first


async def summarize_session(
    assembler: ContextAssembler, session_id: str, body: SessionSummarizeRequest
) -> SessionSummarizeResponse:
    overrides: dict[str, Any] = {
        "strategy": body.strategy,
        "max_summary_tokens": body.max_summary_tokens,
    }
    options = ContextOptions(
        mode="force", overrides=overrides, focus=body.focus, trigger="manual", record_served=False
    )
    served = await assembler.serve(session_id, options)
    fold = served.fold
    result = fold.result if fold is not None else None
    return SessionSummarizeResponse(
        session_id=session_id,
        folded=fold is not None,
        messages_folded=served.folded_messages,
        summary=served.snapshot.summary_read,
        method=result.method if result else None,
        fallback=result.fallback if result else None,
        stats=fold.stats if fold is not None else None,
    )


async def summary_history(
    db: AsyncSession, tenant: str, session_id: str, *, limit: int, cursor: str | None
) -> SummaryHistoryPage:
    session = await SessionRepository(db, tenant).get_or_raise(session_id)
    before = decode_cursor(CURSOR_KIND, cursor) if cursor else None
    rows = await SummaryRepository(db).page(session.pk, before_version=before, limit=limit + 1)
    has_more = len(rows) > limit
    rows = rows[:limit]
    return SummaryHistoryPage(
        summaries=[SummaryHistoryItem.model_validate(row) for row in rows],
        next_cursor=encode_cursor(CURSOR_KIND, rows[-1].version) if has_more and rows else None,
    )


async def clear_session(db: AsyncSession, tenant: str, session_id: str) -> SessionRead:
    sessions = SessionRepository(db, tenant)
    row = await sessions.get_or_raise(session_id)
    # The session's write lock first: an append cannot slip in between reading the newest
    # message and moving the marker past it.
    last_seq = await sessions.lock_for_append(row)
    tokens_before = row.live_tokens
    # The newest stored message (seq last_seq, unless it was removed since).
    newest = await MessageRepository(db).newest(row.pk) if last_seq else None
    await FoldRepository(db).clear(
        row.pk, last_seq=last_seq, through_id=newest.id if newest else None
    )
    await db.refresh(row)
    log_event(
        log,
        "clear",
        session=session_id,
        version=row.summary_version,
        through_seq=last_seq,
        tokens_before=tokens_before,
        tokens_after=row.live_tokens,
        reason="requested",
    )
    return session_read(row, sessions.stats(row))
