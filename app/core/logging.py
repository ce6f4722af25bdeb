"""Logging setup: one line per record, level from FOLDWISE_LOG_LEVEL.

Logs never hold message content, summaries, tool inputs or keys, at any level (SPEC §12).
Foldwise's own records carry ids, counts and error types only. Third-party libraries are held
back where their records below WARNING carry request data:

- the Anthropic SDK logs each request's options at DEBUG: the body, i.e. the transcript;
- httpx / httpcore (and the SDK's httpx2 / httpcore2) trace requests and response headers;
- aiosqlite logs each call with its parameters, asyncpg its protocol traffic;
- SQLAlchemy logs result rows at DEBUG and statements at INFO: statements are kept at
  FOLDWISE_LOG_LEVEL=debug only, their parameters hidden by the engines' `hide_parameters`.

Levels keep those records from being made; a filter on the handlers drops them anyway, so a
library that raises its own level later (ANTHROPIC_LOG=debug does, on import) logs nothing more.
A logged exception keeps its type and traceback but not its message, which may quote what it
was handling (a pydantic error repeats the input, a driver error the value it refused).
"""

from __future__ import annotations

import logging
import sys
import traceback
from types import TracebackType
from typing import Any, TextIO

LOG_FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"

# Loggers (and their children) allowed WARNING and above only.
QUIET_LOGGERS = (
    "anthropic",
    "httpx",
    "httpx2",
    "httpcore",
    "httpcore2",
    "hpack",
    "aiosqlite",
    "asyncpg",
)
# SQL statements: at INFO in this logger, emitted only when Foldwise logs at DEBUG.
SQL_LOGGER = "sqlalchemy.engine"


def _is_under(name: str, parent: str) -> bool:
    return name == parent or name.startswith(parent + ".")


class ContentGuard(logging.Filter):
    """Drops the third-party records that can carry request data, whatever their logger's
    level: below WARNING from QUIET_LOGGERS, below INFO (result rows) from SQLAlchemy."""

    def filter(self, record: logging.LogRecord) -> bool:
        if record.levelno >= logging.WARNING:
            return True
        name = record.name
        if any(_is_under(name, quiet) for quiet in QUIET_LOGGERS):
            return False
        return not (_is_under(name, SQL_LOGGER) and record.levelno < logging.INFO)


class _Formatter(logging.Formatter):
    def formatException(
        self,
        ei: tuple[type[BaseException], BaseException, TracebackType | None]
        | tuple[None, None, None],
    ) -> str:
        kind, _exc, tb = ei
        frames = "".join(traceback.format_tb(tb))
        name = kind.__name__ if kind else "exception"
        return f"Traceback (most recent call last):\n{frames}{name} (message not logged)"


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
        handler.setFormatter(_Formatter(LOG_FORMAT))
        handler._foldwise = True  # type: ignore[attr-defined]
        root.addHandler(handler)
    # Every root handler, also one a library added before us (logging.basicConfig).
    for each in root.handlers:
        if not any(isinstance(f, ContentGuard) for f in each.filters):
            each.addFilter(ContentGuard())
    # Alembic announces each autogenerate plugin at INFO on every start; keep the
    # "Running upgrade" lines, drop the noise.
    logging.getLogger("alembic.runtime.plugins").setLevel(logging.WARNING)
    for name in QUIET_LOGGERS:
        logging.getLogger(name).setLevel(logging.WARNING)
    debug = root.level <= logging.DEBUG
    logging.getLogger(SQL_LOGGER).setLevel(logging.INFO if debug else logging.WARNING)
    logging.getLogger("sqlalchemy.pool").setLevel(max(logging.INFO, root.level))


def get_logger(name: str) -> logging.Logger:
    return logging.getLogger(name)
