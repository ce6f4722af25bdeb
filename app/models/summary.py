"""Summary history: every version of a session's summary (folds and clears) is kept."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import ForeignKey, Integer, String, Text, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column

from app.models.base import Base, JSONType, Timestamp, utcnow


class Summary(Base):
    __tablename__ = "summaries"
    __table_args__ = (UniqueConstraint("session_id", "version"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    session_id: Mapped[int] = mapped_column(ForeignKey("sessions.pk", ondelete="CASCADE"))
    version: Mapped[int] = mapped_column(Integer)
    text: Mapped[str | None] = mapped_column(Text)
    through_id: Mapped[str | None] = mapped_column(String(36))
    through_seq: Mapped[int] = mapped_column(Integer, default=0)
    message_count: Mapped[int] = mapped_column(Integer, default=0)
    tokens: Mapped[int] = mapped_column(Integer, default=0)
    # rule | llm | hybrid | fallback | clear
    method: Mapped[str] = mapped_column(String(16))
    model: Mapped[str | None] = mapped_column(String(128))
    tokens_in: Mapped[int] = mapped_column(Integer, default=0)
    tokens_out: Mapped[int] = mapped_column(Integer, default=0)
    # The LLM call's billed tokens and how it was asked (app/summarizers/base.py ModelUsage,
    # PromptKind); null when no model was called.
    usage: Mapped[dict[str, Any] | None] = mapped_column(JSONType, nullable=True)
    # trigger, tokens_before/after, messages_before/after
    stats: Mapped[dict[str, Any]] = mapped_column(JSONType, default=dict)
    created_at: Mapped[datetime] = mapped_column(Timestamp, default=utcnow)
