"""The settings tables of README.md and docs/reference.md are the declarations' own
(app/core/settings_docs.py): a setting added, renamed, re-bounded or re-described in code
and not in the docs fails here. Fix: `python -m app.core.settings_docs`."""

from __future__ import annotations

import pytest

from app.core import settings_docs
from app.core.context_settings import ContextSettings
from app.core.settings import Settings


@pytest.mark.parametrize("name", sorted(settings_docs.TABLES))
def test_the_table_in_the_docs_is_the_one_the_code_writes(name: str) -> None:
    path, table = settings_docs.TABLES[name]
    text = path.read_text()
    assert settings_docs.written(text, name, table()) == text, (
        f"{path.name}'s {name} table differs from the code: run python -m app.core.settings_docs"
    )


def test_every_setting_says_what_it_does() -> None:
    undocumented = [
        n for n, f in Settings.model_fields.items() if not (f.description or "").strip()
    ]
    assert undocumented == []
    assert set(ContextSettings.model_fields) <= set(Settings.model_fields)


def test_bounds_and_defaults_come_from_the_declarations() -> None:
    fields = Settings.model_fields
    assert settings_docs._bounds(fields["threshold"]) == "(0, 1]"
    assert settings_docs._bounds(fields["max_summary_tokens"]) == "≥ 50"
    assert settings_docs._bounds(fields["strategy"]) == "`auto`, `rule`, `llm`, `hybrid`"
    assert settings_docs._default("pin_first_message", fields["pin_first_message"]) == "`true`"
    assert settings_docs._env("openai_api_key", fields["openai_api_key"]) == "OPENAI_API_KEY"
    row = next(
        r for r in settings_docs.service_table().splitlines() if r.startswith("| keep_recent")
    )
    assert "`FOLDWISE_KEEP_RECENT` | `6` |" in row


def test_a_doc_without_its_markers_is_refused() -> None:
    with pytest.raises(ValueError, match="markers"):
        settings_docs.written("no table here", "settings", "| a |")
