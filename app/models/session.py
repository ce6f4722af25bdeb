"""A conversation: its defaults, its summary state, its fold lease and its seq counter."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import Integer, String, Text, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column

from app.models.base import Base, JSONType, Timestamp, utcnow


class Session(Base):
    __tablename__ = "sessions"
    __table_args__ = (UniqueConstraint("tenant", "external_id"),)

    pk: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    tenant: Mapped[str] = mapped_column(String(128))
    external_id: Mapped[str] = mapped_column(String(256))
    model: Mapped[str] = mapped_column(String(128))
    system_prompt: Mapped[str | None] = mapped_column(Text)
    tools: Mapped[list[dict[str, Any]] | None] = mapped_column(JSONType)
    settings: Mapped[dict[str, Any]] = mapped_column(JSONType, default=dict)
    meta: Mapped[dict[str, Any]] = mapped_column("metadata", JSONType, default=dict)
    created_at: Mapped[datetime] = mapped_column(Timestamp, default=utcnow)
    updated_at: Mapped[datetime] = mapped_column(Timestamp, default=utcnow, onupdate=utcnow)

    # Highest seq handed out; appends bump it with UPDATE … RETURNING in their transaction,
    # which serialises concurrent appends on the row and keeps seqs gap-free.
    last_seq: Mapped[int] = mapped_column(Integer, default=0)
    # Sum of token_count over the messages after the clear marker, kept by appends (+) and
    # clears (reset), so GET /sessions/{id} never sums a long history.
    live_tokens: Mapped[int] = mapped_column(Integer, default=0)
    # Messages removed by DELETE …/messages/last (seqs are never reused, so
    # message_count = last_seq − removed_count), and of those the ones after the clear
    # marker (reset by clears, like live_tokens).
    removed_count: Mapped[int] = mapped_column(Integer, default=0, server_default="0")
    live_removed: Mapped[int] = mapped_column(Integer, default=0, server_default="0")

    # Summary state (docs/reference.md §Concepts). No FK on summary_through_id: messages
    # already reference sessions, and a cycle would need use_alter and deferred constraints for
    # no gain (messages are only removed together with their session).
    conversation_summary: Mapped[str | None] = mapped_column(Text)
    summary_through_id: Mapped[str | None] = mapped_column(String(36))
    summary_through_seq: Mapped[int] = mapped_column(Integer, default=0)
    summary_version: Mapped[int] = mapped_column(Integer, default=0)
    summary_message_count: Mapped[int] = mapped_column(Integer, default=0)
    summary_tokens: Mapped[int] = mapped_column(Integer, default=0)
    summary_method: Mapped[str | None] = mapped_column(String(16))
    # Messages with seq ≤ this are before the last "clear context".
    cleared_through_seq: Mapped[int] = mapped_column(Integer, default=0)

    # Fold lease: one worker pays for the summarizer call; others wait or serve without.
    fold_lease_owner: Mapped[str | None] = mapped_column(String(64))
    fold_lease_until: Mapped[datetime | None] = mapped_column(Timestamp)

    # {model: estimated_tokens} of the last context served, for POST …/usage calibration.
    last_context: Mapped[dict[str, Any]] = mapped_column(JSONType, default=dict)
