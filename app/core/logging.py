"""Logging setup: one line per record, level from FOLDWISE_LOG_LEVEL, format from
FOLDWISE_LOG_FORMAT (`text`, or `json` for log pipelines), the same for uvicorn and the app.

Operator events (a fold, a fallback, a prune step, a clear, a lease takeover, a refused
request, a request in the access log) are one record each, made by `log_event`: a name and
plain fields (ids, counts, durations, reasons). The text format renders them as
`name key=value …`, the JSON format as one object with the fields as keys.

Logs never hold message content, summaries, tool inputs or keys, at any level (SPEC §12).
Foldwise's own records carry ids, counts and error types only. Third-party libraries are held
back where their records below WARNING carry request data:

- the Anthropic SDK logs each request's options at DEBUG: the body, i.e. the transcript (the
  openai and google-genai SDKs are held back alike);
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

import json
import logging
import re
import sys
import traceback
from datetime import UTC, datetime
from types import TracebackType
from typing import Any, Literal, TextIO

LogFormat = Literal["text", "json"]
LOG_FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"
# The record attribute `log_event` stores an event's fields under.
EVENT_FIELDS = "foldwise_fields"
# A text value made only of these is written bare; anything else is JSON-quoted, so a value
# can never break a line in two or pass for another field.
_BARE = re.compile(r"[\w.:/@+\->{}]+")

# Loggers (and their children) allowed WARNING and above only.
QUIET_LOGGERS = (
    "anthropic",
    "openai",
    "google_genai",
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


def _exception_text(
    ei: tuple[type[BaseException], BaseException, TracebackType | None] | tuple[None, None, None],
) -> str:
    kind, _exc, tb = ei
    frames = "".join(traceback.format_tb(tb))
    name = kind.__name__ if kind else "exception"
    return f"Traceback (most recent call last):\n{frames}{name} (message not logged)"


def _text_value(value: Any) -> str:
    text = value if isinstance(value, str) else json.dumps(value)
    return text if _BARE.fullmatch(text) else json.dumps(text)


class TextFormatter(logging.Formatter):
    """`time LEVEL logger: message key=value …`."""

    def __init__(self) -> None:
        super().__init__(LOG_FORMAT)

    def formatMessage(self, record: logging.LogRecord) -> str:
        line = super().formatMessage(record)
        fields: dict[str, Any] = getattr(record, EVENT_FIELDS, {})
        if not fields:
            return line
        return line + " " + " ".join(f"{k}={_text_value(v)}" for k, v in fields.items())

    def formatException(self, ei: Any) -> str:
        return _exception_text(ei)


class JsonFormatter(logging.Formatter):
    """One JSON object per line: time, level, logger, message, then the event's fields."""

    def format(self, record: logging.LogRecord) -> str:
        entry: dict[str, Any] = {
            "time": datetime.fromtimestamp(record.created, UTC).isoformat(timespec="milliseconds"),
            "level": record.levelname.lower(),
            "logger": record.name,
            "message": record.getMessage(),
            **getattr(record, EVENT_FIELDS, {}),
        }
        if record.exc_info:
            entry["exception"] = _exception_text(record.exc_info)
        return json.dumps(entry, ensure_ascii=False, default=str)


def log_event(
    logger: logging.Logger, event: str, /, *, level: int = logging.INFO, **fields: Any
) -> None:
    """One operator event: `event` names it; `fields` hold ids, counts, durations and
    reasons only, never content."""
    if logger.isEnabledFor(level):
        logger.log(level, event, extra={EVENT_FIELDS: fields})


class _StderrHandler(logging.StreamHandler[TextIO]):
    """Writes to whatever `sys.stderr` is at emit time: test runners swap (and close) it."""

    @property
    def stream(self) -> TextIO:
        return sys.stderr

    @stream.setter
    def stream(self, _value: Any) -> None:
        pass


def configure_logging(level: str = "info", log_format: LogFormat = "text") -> None:
    """Configure the root logger once (its format again on each call). uvicorn is started
    with `log_config=None`, so its loggers propagate here and share the format."""
    root = logging.getLogger()
    numeric = logging.getLevelName(level.upper())
    root.setLevel(numeric if isinstance(numeric, int) else logging.INFO)
    handler = next((h for h in root.handlers if getattr(h, "_foldwise", False)), None)
    if handler is None:
        handler = _StderrHandler()
        handler._foldwise = True  # type: ignore[attr-defined]
        root.addHandler(handler)
    handler.setFormatter(JsonFormatter() if log_format == "json" else TextFormatter())
    for name in ("uvicorn", "uvicorn.error", "uvicorn.access"):
        uvicorn_logger = logging.getLogger(name)
        uvicorn_logger.handlers.clear()
        uvicorn_logger.propagate = True
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
    # Pool lifecycle (connections opened, disposed) is debugging detail too.
    logging.getLogger("sqlalchemy.pool").setLevel(logging.DEBUG if debug else logging.WARNING)


def get_logger(name: str) -> logging.Logger:
    return logging.getLogger(name)
