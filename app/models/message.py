"""A stored message: immutable after append, with its token count computed once."""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Any

from sqlalchemy import ForeignKey, Integer, String, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column

from app.models.base import Base, JSONType, Timestamp, utcnow


def new_id() -> str:
    return str(uuid.uuid4())


class Message(Base):
    __tablename__ = "messages"
    __table_args__ = (
        UniqueConstraint("session_id", "seq"),
        UniqueConstraint("session_id", "client_id"),
    )

    id: Mapped[str] = mapped_column(String(36), primary_key=True, default=new_id)
    session_id: Mapped[int] = mapped_column(ForeignKey("sessions.pk", ondelete="CASCADE"))
    seq: Mapped[int] = mapped_column(Integer)
    role: Mapped[str] = mapped_column(String(16))
    content: Mapped[Any] = mapped_column(JSONType)
    name: Mapped[str | None] = mapped_column(String(256))
    tool_calls: Mapped[list[dict[str, Any]] | None] = mapped_column(JSONType)
    tool_call_id: Mapped[str | None] = mapped_column(String(256))
    meta: Mapped[dict[str, Any]] = mapped_column("metadata", JSONType, default=dict)
    token_count: Mapped[int] = mapped_column(Integer)
    client_id: Mapped[str | None] = mapped_column(String(256))
    created_at: Mapped[datetime] = mapped_column(Timestamp, default=utcnow)
