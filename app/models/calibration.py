"""Usage calibration: the learned ratio of the provider's count to our estimate."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import Float, Integer, String
from sqlalchemy.orm import Mapped, mapped_column

from app.models.base import Base, Timestamp, utcnow


class Calibration(Base):
    """Smoothed ratio provider_count / our_estimate per tenant and model family."""

    __tablename__ = "calibrations"

    tenant: Mapped[str] = mapped_column(String(128), primary_key=True)
    family: Mapped[str] = mapped_column(String(128), primary_key=True)
    ratio: Mapped[float] = mapped_column(Float, default=1.0)
    samples: Mapped[int] = mapped_column(Integer, default=0)
    updated_at: Mapped[datetime] = mapped_column(Timestamp, default=utcnow, onupdate=utcnow)
