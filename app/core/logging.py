"""Logging setup: one line per record, level from FOLDWISE_LOG_LEVEL."""

from __future__ import annotations

import logging
import sys
from typing import Any, TextIO

LOG_FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"


class _StderrHandler(logging.StreamHandler[TextIO]):
    """Writes to whatever `sys.stderr` is at emit time: test runners swap (and close) it."""

    @property
    def stream(self) -> TextIO:
        return sys.stderr

    @stream.setter
    def stream(self, _value: Any) -> None:
        pass


def configure_logging(level: str = "info") -> None:
    """Configure the root logger once; uvicorn's own loggers keep their handlers."""
    root = logging.getLogger()
    numeric = logging.getLevelName(level.upper())
    root.setLevel(numeric if isinstance(numeric, int) else logging.INFO)
    if not any(getattr(h, "_foldwise", False) for h in root.handlers):
        handler = _StderrHandler()
        handler.setFormatter(logging.Formatter(LOG_FORMAT))
        handler._foldwise = True  # type: ignore[attr-defined]
        root.addHandler(handler)
    # Alembic announces each autogenerate plugin at INFO on every start; keep the
    # "Running upgrade" lines, drop the noise.
    logging.getLogger("alembic.runtime.plugins").setLevel(logging.WARNING)
    # Message contents never reach the log at any level: aiosqlite logs each call with its
    # parameters at DEBUG, SQLAlchemy result rows at DEBUG (statements stay, at INFO, with
    # their parameters hidden by the engine's hide_parameters).
    logging.getLogger("aiosqlite").setLevel(logging.INFO)
    for name in ("sqlalchemy.engine", "sqlalchemy.pool"):
        logging.getLogger(name).setLevel(max(logging.INFO, root.level))


def get_logger(name: str) -> logging.Logger:
    return logging.getLogger(name)
