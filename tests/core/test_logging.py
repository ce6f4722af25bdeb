"""The two log formats, operator events and the levels third-party loggers get
(app/core/logging.py)."""

from __future__ import annotations

import json
import logging
import sys

import pytest
from hypothesis import given
from hypothesis import strategies as st
from pydantic import ValidationError

from app.core.logging import (
    EVENT_FIELDS,
    JsonFormatter,
    TextFormatter,
    configure_logging,
    log_event,
)
from tests.support.apps import make_settings


def _record(message: str = "fold", **fields: object) -> logging.LogRecord:
    record = logging.LogRecord("foldwise.fold", logging.INFO, __file__, 1, message, (), None)
    setattr(record, EVENT_FIELDS, fields)
    return record


class TestTextFormat:
    def test_fields_follow_the_event_name(self) -> None:
        line = TextFormatter().format(_record(session="chat-42", tokens_before=900, ms=1.5))
        assert line.endswith("INFO foldwise.fold: fold session=chat-42 tokens_before=900 ms=1.5")

    @given(st.text())
    def test_any_value_stays_on_one_line_and_reads_back(self, value: str) -> None:
        line = TextFormatter().format(_record(reason=value))
        assert "\n" not in line and "\r" not in line
        written = line.split(" reason=", 1)[1]
        assert (json.loads(written) if written.startswith('"') else written) == value


class TestJsonFormat:
    def test_one_object_with_the_fields_as_keys(self) -> None:
        entry = json.loads(JsonFormatter().format(_record(session="s", tokens_after=12)))
        assert entry["level"] == "info" and entry["logger"] == "foldwise.fold"
        assert (entry["message"], entry["session"], entry["tokens_after"]) == ("fold", "s", 12)
        assert entry["time"].endswith("+00:00")

    def test_an_exception_keeps_its_type_not_its_message(self) -> None:
        secret = "secret " + "input"
        try:
            raise ValueError(secret)
        except ValueError:
            record = _record("failed")
            record.exc_info = sys.exc_info()
        line = JsonFormatter().format(record)
        assert "\n" not in line
        exception = json.loads(line)["exception"]
        assert "ValueError (message not logged)" in exception and secret not in exception


class TestConfigure:
    def test_uvicorn_logs_through_the_root_handler(self) -> None:
        try:
            configure_logging("info", "json")
            (handler,) = [h for h in logging.getLogger().handlers if getattr(h, "_foldwise", 0)]
            assert isinstance(handler.formatter, JsonFormatter)
            for name in ("uvicorn", "uvicorn.error", "uvicorn.access"):
                assert logging.getLogger(name).propagate and not logging.getLogger(name).handlers
        finally:
            configure_logging("warning")

    @pytest.mark.parametrize(("level", "sql_shown"), [("info", False), ("debug", True)])
    def test_sql_and_pool_records_only_at_debug(self, level: str, sql_shown: bool) -> None:
        try:
            configure_logging(level)
            for name in ("sqlalchemy.engine.Engine", "sqlalchemy.pool.impl.QueuePool"):
                assert logging.getLogger(name).isEnabledFor(logging.INFO) is sql_shown
        finally:
            configure_logging("warning")

    def test_an_event_below_the_level_costs_no_record(
        self, caplog: pytest.LogCaptureFixture
    ) -> None:
        with caplog.at_level(logging.WARNING, logger="foldwise.fold"):
            log_event(logging.getLogger("foldwise.fold"), "fold", session="s")
        assert not caplog.records


class TestSettings:
    def test_format_and_level_are_case_insensitive(self) -> None:
        settings = make_settings("sqlite://", log_format="JSON", log_level="DEBUG")
        assert (settings.log_format, settings.log_level) == ("json", "debug")

    @pytest.mark.parametrize("field", ["log_format", "log_level"])
    def test_unknown_values_are_refused(self, field: str) -> None:
        with pytest.raises(ValidationError):
            make_settings("sqlite://", **{field: "verbose"})
