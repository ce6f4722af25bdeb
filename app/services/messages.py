"""Appending and paging messages.

An append is one transaction: validate every message first (one bad message → nothing
stored), lock the session row, resolve client ids already stored (retries), then insert
the new ones with consecutive seqs and bump the session's counter. Tokens are counted
here, once, with the session model's counter; assembly later only sums them.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any

from sqlalchemy.ext.asyncio import AsyncSession

from app.core.errors import (
    FoldInProgress,
    InvalidMessage,
    MessageCleared,
    MessageSummarized,
    NoMessages,
    UnknownModel,
)
from app.core.metrics import MESSAGES_APPENDED
from app.core.settings import Settings
from app.engine.gemini_in import OpenCalls, is_gemini, open_calls_of
from app.engine.items import Posted, normalize_posted, refuse_unmatched, unmatched_outputs
from app.engine.responses import message_items
from app.engine.shapes import NormalizedMessage
from app.engine.types import call_ids_of
from app.models import Message, Session
from app.models.base import utcnow
from app.models.message import new_id
from app.repositories import MessageRepository, SessionRepository
from app.repositories.context import stored_message
from app.schemas.messages import (
    AppendedMessage,
    AppendResult,
    MessagePage,
    MessageRead,
    RemovedMessage,
)
from app.tokens.counter import TiktokenCounter, counter_for
from app.tokens.registry import ModelRegistry

APPEND_COLUMNS = (Session.external_id, Session.model, Session.cleared_through_seq)
# A batch counted on the event loop: a few plain-text messages, tens of microseconds.
SHORT_BATCH_CHARS = 16_000


def _short(messages: Sequence[NormalizedMessage]) -> bool:
    """Plain text messages of at most SHORT_BATCH_CHARS characters in all."""
    size = 0
    for message in messages:
        if not isinstance(message.content, str) or message.tool_calls:
            return False
        size += len(message.content)
    return size <= SHORT_BATCH_CHARS


def message_read(row: Message, items: list[dict[str, Any]] | None = None) -> MessageRead:
    return MessageRead(
        id=row.id,
        seq=row.seq,
        role=row.role,
        content=row.content,
        name=row.name,
        tool_calls=row.tool_calls,
        tool_call_id=row.tool_call_id,
        metadata=dict(row.meta or {}),
        token_count=row.token_count,
        client_id=row.client_id,
        created_at=row.created_at,
        items=items,
    )


def _appended(row: Message, posted: Posted, *, duplicate: bool) -> AppendedMessage:
    return AppendedMessage(
        id=row.id,
        seq=row.seq,
        token_count=row.token_count,
        created_at=row.created_at,
        client_id=row.client_id,
        duplicate=duplicate,
        indexes=list(posted.indexes),
    )


class MessageService:
    def __init__(
        self, db: AsyncSession, tenant: str, settings: Settings, registry: ModelRegistry
    ) -> None:
        self.sessions = SessionRepository(db, tenant)
        self.messages = MessageRepository(db)
        self.settings = settings
        self.registry = registry

    def _counter(self, session: Session) -> TiktokenCounter:
        try:
            info = self.registry.get(session.model)
        except UnknownModel:
            # The registry may have been reconfigured since the session was created.
            info = self.registry.get(self.settings.default_model)
        return counter_for(info)

    async def append(self, session_id: str, raw: Sequence[Mapping[str, Any]]) -> AppendResult:
        # Only what an append reads: not the summary, tools or served records.
        session = await self.sessions.get_or_raise(session_id, *APPEND_COLUMNS)
        posted = normalize_posted(raw, await self._open_calls(session, raw))
        normalized = [p.message for p in posted]
        counter = self._counter(session)
        # Counting up to 8 MiB of text is CPU work: done in a thread (a short chat message on
        # the loop, where it costs less than the hop), and before the write lock is taken, so
        # neither the event loop nor other writers wait for it.
        if _short(normalized):
            counts = [counter.count_message(m) for m in normalized]
        else:
            counts = await asyncio.to_thread(lambda: [counter.count_message(m) for m in normalized])
        retries = [m.client_id for m in normalized if m.client_id]
        if retries:  # the lock first, then the client ids stored before it (retries)
            last_seq, reserved = await self.sessions.lock_for_append(session), False
            stored = await self.messages.by_client_ids(session.pk, retries)
        else:  # every message is new: the lock and their seqs in one statement
            reserved, stored = True, {}
            last_seq = await self.sessions.reserve_seqs(session, len(counts), sum(counts))
            last_seq -= len(counts)
        await self._refuse_reused_call_ids(session, normalized, stored)
        await self._refuse_unmatched_outputs(session, raw, posted)
        results: list[AppendedMessage] = []
        new_rows: list[Message] = []
        now = utcnow()
        for entry, tokens in zip(posted, counts, strict=True):
            message = entry.message
            known = stored.get(message.client_id) if message.client_id else None
            if known is not None:
                results.append(_appended(known, entry, duplicate=True))
                continue
            row = self._new_row(session, message, last_seq + len(new_rows) + 1, tokens, now)
            new_rows.append(row)
            if message.client_id:
                stored[message.client_id] = row
            results.append(_appended(row, entry, duplicate=False))
        if new_rows:
            await self.messages.add_all(new_rows)
            if not reserved:
                tokens = sum(row.token_count for row in new_rows)
                await self.sessions.advance_seq(session, len(new_rows), tokens)
            MESSAGES_APPENDED.inc(len(new_rows))
        return AppendResult(messages=results)

    async def _open_calls(
        self, session: Session, raw: Sequence[Mapping[str, Any]]
    ) -> OpenCalls | None:
        """The calls of the session's newest message, read only when the post starts with a
        Gemini user content whose function responses may answer them without an id."""
        first = raw[0] if raw else None
        if not (is_gemini(first) and first.get("role") == "user"):  # type: ignore[union-attr]
            return None
        newest = await self.messages.newest(session.pk)
        if newest is None or newest.seq <= session.cleared_through_seq:
            return None
        return open_calls_of(newest)

    async def _refuse_reused_call_ids(
        self, session: Session, normalized: list[NormalizedMessage], stored: Mapping[str, Message]
    ) -> None:
        """422 when a new message reuses a tool call id an earlier turn made (after the clear
        marker): its results could no longer be told apart. Retries (known client_id) are
        not new."""
        fresh = [m for m in normalized if not (m.client_id and m.client_id in stored)]
        ids = [i for m in fresh for i in call_ids_of(m.content, m.tool_calls)]
        clash = await self.messages.call_ids_in_use(session.pk, session.cleared_through_seq, ids)
        if clash:
            reused = sorted(clash)
            raise InvalidMessage(
                f"tool call id(s) already used in this session: {', '.join(reused)}",
                {"reused_tool_ids": reused},
            )

    async def _refuse_unmatched_outputs(
        self, session: Session, raw: Sequence[Mapping[str, Any]], posted: list[Posted]
    ) -> None:
        """422 `unmatched_call_output` for a Responses `function_call_output` answering no call
        of this post nor of a stored message after the clear marker."""
        unmatched = unmatched_outputs(raw, posted)
        if not unmatched:
            return
        known = await self.messages.call_ids_in_use(
            session.pk, session.cleared_through_seq, list(unmatched)
        )
        refuse_unmatched(raw, {c: i for c, i in unmatched.items() if c not in known})

    @staticmethod
    def _new_row(
        session: Session,
        message: NormalizedMessage,
        seq: int,
        token_count: int,
        now: datetime,
    ) -> Message:
        tool_calls = [dict(call) for call in message.tool_calls] if message.tool_calls else None
        return Message(
            id=new_id(),
            session_id=session.pk,
            seq=seq,
            role=message.role,
            content=message.content,
            name=message.name,
            tool_calls=tool_calls,
            tool_call_id=message.tool_call_id,
            meta=dict(message.metadata or {}),
            token_count=token_count,
            client_id=message.client_id,
            created_at=now,
        )

    async def page(
        self, session_id: str, *, after_seq: int, limit: int, as_items: bool = False
    ) -> MessagePage:
        """`as_items`: each message also as Responses input items (`items`)."""
        session = await self.sessions.get_or_raise(session_id)
        rows = await self.messages.list_after(session.pk, after_seq=after_seq, limit=limit + 1)
        has_more = len(rows) > limit
        rows = rows[:limit]
        next_after_seq = rows[-1].seq if has_more and rows else None
        messages = [message_read(r, _as_items(r) if as_items else None) for r in rows]
        return MessagePage(messages=messages, next_after_seq=next_after_seq)

    async def remove_newest(self, session_id: str) -> RemovedMessage:
        """Delete the session's newest message (an explicit user action: summarization never
        deletes). Refused when the summary or the clear marker already covers it, or while a
        fold runs (its summary could cover the message)."""
        session = await self.sessions.get_or_raise(session_id)
        await self.sessions.lock_for_append(session)
        await self.sessions.reload(session)  # the state under the lock
        row = await self.messages.newest(session.pk)
        if row is None:
            raise NoMessages(f"session {session_id!r} has no messages", {"session_id": session_id})
        details = {"session_id": session_id, "id": row.id, "seq": row.seq}
        if row.seq <= session.cleared_through_seq:
            raise MessageCleared("the newest message is before the clear marker", details)
        if row.seq <= session.summary_through_seq:
            raise MessageSummarized("the newest message is folded into the summary", details)
        until = session.fold_lease_until
        if session.fold_lease_owner and until is not None and until > utcnow():
            raise FoldInProgress("a fold of this session is running; retry", details)
        removed = RemovedMessage(**message_read(row, _as_items(row)).model_dump())
        await self.messages.remove(row)
        await self.sessions.remove_newest(session, row.token_count)
        return removed


def _as_items(row: Message) -> list[dict[str, Any]]:
    """One stored message as Responses input items (no summary, no system prompt)."""
    return message_items(stored_message(row))
