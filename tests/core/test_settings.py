from __future__ import annotations

import pytest
from pydantic import ValidationError

from app.cli import main
from app.core.context_settings import ContextOverrides, ContextSettings
from app.core.db import normalize_database_url
from app.core.settings import Settings


class TestDatabaseUrl:
    @pytest.mark.parametrize(
        ("raw", "expected"),
        [
            ("sqlite:///foldwise.db", "sqlite+aiosqlite:///foldwise.db"),
            ("sqlite:////abs/path.db", "sqlite+aiosqlite:////abs/path.db"),
            ("sqlite+aiosqlite:///x.db", "sqlite+aiosqlite:///x.db"),
            ("postgresql://u@h:5432/db", "postgresql+asyncpg://u@h:5432/db"),
            ("postgres://u:p@h/db", "postgresql+asyncpg://u:p@h/db"),
            ("postgresql+psycopg2://u@h/db", "postgresql+asyncpg://u@h/db"),
            ("postgresql+asyncpg://u@h/db", "postgresql+asyncpg://u@h/db"),
        ],
    )
    def test_plain_urls_get_their_async_driver(self, raw: str, expected: str) -> None:
        assert normalize_database_url(raw).render_as_string(hide_password=False) == expected

    def test_unsupported_database_is_a_clear_error(self) -> None:
        with pytest.raises(ValueError, match="unsupported database 'mysql'"):
            normalize_database_url("mysql://u@h/db")


class TestSettings:
    def test_overrides_cover_exactly_the_context_settings_with_their_bounds(self) -> None:
        assert set(ContextOverrides.model_fields) == set(ContextSettings.model_fields)
        assert ContextOverrides(threshold=None).model_dump(exclude_none=True) == {}
        with pytest.raises(ValidationError):
            ContextOverrides(threshold=1.5)
        with pytest.raises(ValidationError):
            ContextOverrides(max_summary_tokens=49)
        with pytest.raises(ValidationError):
            ContextOverrides(unknown_key=1)

    def test_environment_variables_are_read(self, monkeypatch: pytest.MonkeyPatch) -> None:
        monkeypatch.setenv("FOLDWISE_THRESHOLD", "0.5")
        monkeypatch.setenv("FOLDWISE_CORS_ORIGINS", "https://a.example, https://b.example")
        monkeypatch.setenv("FOLDWISE_MAX_BODY_BYTES", "4096")
        settings = Settings(_env_file=None)
        assert settings.threshold == 0.5
        assert settings.cors_origins == ["https://a.example", "https://b.example"]
        assert settings.max_body_bytes == 4096


class TestServeRefusesOpenPublicBind:
    def test_non_loopback_without_keys_is_refused(
        self, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
    ) -> None:
        from app.core import settings as settings_module

        monkeypatch.setenv("FOLDWISE_API_KEYS", "")
        monkeypatch.setenv("FOLDWISE_ALLOW_OPEN", "false")
        settings_module.get_settings.cache_clear()
        try:
            assert main(["serve", "--host", "0.0.0.0", "--port", "8019"]) == 2
        finally:
            settings_module.get_settings.cache_clear()
        assert "FOLDWISE_ALLOW_OPEN=true" in capsys.readouterr().err

    def test_malformed_keys_are_reported_by_the_cli(
        self, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
    ) -> None:
        from app.core import settings as settings_module

        monkeypatch.setenv("FOLDWISE_API_KEYS", "no-colon")
        settings_module.get_settings.cache_clear()
        try:
            assert main(["serve", "--port", "8019"]) == 2
        finally:
            settings_module.get_settings.cache_clear()
        assert "expected tenant:key" in capsys.readouterr().err
