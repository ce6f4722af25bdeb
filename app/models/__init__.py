"""SQLAlchemy ORM models; importing this package registers every table on Base.metadata."""

from app.models.base import Base
from app.models.calibration import Calibration
from app.models.message import Message
from app.models.session import Session
from app.models.summary import Summary
from app.models.summary_cache import SummaryCacheEntry

__all__ = ["Base", "Calibration", "Message", "Session", "Summary", "SummaryCacheEntry"]
