from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

from app.cli import main, read_transcript

MESSAGES = [
    {"role": "user", "content": "Fix the failing test"},
    {"role": "assistant", "content": "Reading tests/test_api.py"},
]


class TestReadTranscript:
    @pytest.mark.parametrize(
        "text",
        [
            json.dumps(MESSAGES),
            json.dumps({"messages": MESSAGES}),
            "\n".join(json.dumps(m) for m in MESSAGES) + "\n",
        ],
        ids=["array", "object", "jsonl"],
    )
    def test_accepts_the_three_formats(self, tmp_path: Path, text: str) -> None:
        path = tmp_path / "transcript.json"
        path.write_text(text)
        assert read_transcript(str(path)) == MESSAGES

    def test_rejects_other_json(self, tmp_path: Path) -> None:
        path = tmp_path / "bad.json"
        path.write_text('{"not": "messages"}')
        with pytest.raises(ValueError, match="expected a JSON array"):
            read_transcript(str(path))


class TestCount:
    def test_counts_stdin_like_the_api(
        self, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
    ) -> None:
        from app.tokens.base import BareMessage
        from app.tokens.counter import counter_for
        from app.tokens.registry import load_registry
        from tests.support.apps import make_settings

        monkeypatch.setattr("sys.stdin", io.StringIO(json.dumps(MESSAGES)))
        assert main(["count", "-", "--model", "gpt-4o"]) == 0
        counter = counter_for(load_registry(make_settings("sqlite://")).get("gpt-4o"))
        expected = sum(
            counter.count_message(BareMessage(m["role"], m["content"])) for m in MESSAGES
        )
        assert capsys.readouterr().out.strip() == str(expected)

    def test_bad_message_is_a_clean_error(
        self, tmp_path: Path, capsys: pytest.CaptureFixture[str]
    ) -> None:
        path = tmp_path / "t.json"
        path.write_text(json.dumps([{"role": "wizard", "content": "x"}]))
        assert main(["count", str(path)]) == 2
        assert "invalid_message" in capsys.readouterr().err

    def test_missing_file(self, capsys: pytest.CaptureFixture[str]) -> None:
        assert main(["count", "/nonexistent/transcript.json"]) == 2
        assert "No such file" in capsys.readouterr().err


class TestMigrate:
    def test_creates_the_schema(
        self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
    ) -> None:
        import sqlite3

        from app.core import settings as settings_module

        db = tmp_path / "cli.db"
        monkeypatch.setenv("FOLDWISE_DATABASE_URL", f"sqlite:///{db}")
        settings_module.get_settings.cache_clear()
        try:
            assert main(["migrate"]) == 0
        finally:
            settings_module.get_settings.cache_clear()
        tables = {row[0] for row in sqlite3.connect(db).execute("SELECT name FROM sqlite_master")}
        assert {"sessions", "messages", "summaries", "summary_cache", "calibrations"} <= tables
