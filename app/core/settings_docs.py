"""The settings tables of README.md (every setting) and docs/reference.md (the context
settings), written from the declarations: each field's docstring is its meaning, its type and
`Field` bounds its values. `python -m app.core.settings_docs` rewrites both tables between
their markers; tests/core/test_settings_docs.py fails when a table and the code differ."""

from __future__ import annotations

import re
import sys
import typing
from pathlib import Path
from typing import Any

import annotated_types
from pydantic import AliasChoices
from pydantic.fields import FieldInfo
from pydantic_core import PydanticUndefined

from app.core.context_settings import ContextSettings
from app.core.settings import Settings

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"
REFERENCE = ROOT / "docs" / "reference.md"
# Defaults whose value alone says too little.
SHOWN_DEFAULTS = {
    "api_keys": "empty (open mode)",
    "max_body_bytes": "`8388608` (8 MiB)",
    "fold_ahead": "unset: `0.9` for an LLM fold, `1` for a rule fold",
    "fold_hard_wait_s": (
        "unset: `0.25` for a rule fold of up to 64k tokens, `0` for an LLM fold or a larger span"
    ),
    "retention_days": "`0` (keep forever)",
}


def begin(name: str) -> str:
    return f"<!-- {name} table: written by `python -m app.core.settings_docs` from app/core -->"


def end(name: str) -> str:
    return f"<!-- end of the {name} table -->"


def _meaning(field: FieldInfo) -> str:
    return " ".join((field.description or "").split())


def _env(name: str, field: FieldInfo) -> str:
    alias = field.validation_alias
    if isinstance(alias, AliasChoices):  # the first is the name; the others are still read
        alias = alias.choices[0]
    return alias if isinstance(alias, str) else f"FOLDWISE_{name.upper()}"


def _default(name: str, field: FieldInfo) -> str:
    if name in SHOWN_DEFAULTS:
        return SHOWN_DEFAULTS[name]
    value = field.default
    if value is None or value == [] or value is PydanticUndefined:
        return "none"
    if isinstance(value, bool):
        return f"`{str(value).lower()}`"
    return f"`{value}`"


def _bounds(field: FieldInfo) -> str:
    """`(0, 1]`, `≥ 50`, or a Literal's values; empty for a bool or a free value."""
    choices = typing.get_args(field.annotation)
    if choices and all(isinstance(c, str) for c in choices):
        return ", ".join(f"`{c}`" for c in choices)
    low = high = None
    for rule in field.metadata:
        if isinstance(rule, annotated_types.Gt | annotated_types.Ge):
            low = rule
        elif isinstance(rule, annotated_types.Le | annotated_types.Lt):
            high = rule
    if isinstance(high, annotated_types.Le) and high.le == 1:
        opening = "(" if isinstance(low, annotated_types.Gt) else "["
        start = low.gt if isinstance(low, annotated_types.Gt) else getattr(low, "ge", 0)
        return f"{opening}{start}, 1]"
    if isinstance(low, annotated_types.Gt):
        return f"> {low.gt}"
    if isinstance(low, annotated_types.Ge):
        return f"≥ {low.ge}"
    return ""


def service_table() -> str:
    """README's configuration table: every setting, in declaration order."""
    rows = ["| Setting | Environment variable | Default | Meaning |", "|---|---|---|---|"]
    for name, field in Settings.model_fields.items():
        rows.append(
            f"| {name} | `{_env(name, field)}` | {_default(name, field)} | {_meaning(field)} |"
        )
    return "\n".join(rows)


def context_table() -> str:
    """docs/reference.md's context settings: key, default, bounds, meaning (links made
    relative to docs/)."""
    rows = ["| key | default | bounds | meaning |", "|---|---|---|---|"]
    for name, field in ContextSettings.model_fields.items():
        meaning = re.sub(r"\]\(#", "](../README.md#", _meaning(field))
        meaning = meaning.replace("](docs/", "](")
        rows.append(f"| `{name}` | {_default(name, field)} | {_bounds(field)} | {meaning} |")
    return "\n".join(rows)


TABLES: dict[str, tuple[Path, Any]] = {
    "settings": (README, service_table),
    "context settings": (REFERENCE, context_table),
}


def written(text: str, name: str, table: str) -> str:
    """`text` with the table between its markers replaced by `table`."""
    head, marker, rest = text.partition(begin(name) + "\n")
    if not marker or end(name) not in rest:
        raise ValueError(f"no {name!r} table markers")
    return head + marker + table + "\n" + end(name) + rest.split(end(name), 1)[1]


def main() -> int:
    for name, (path, table) in TABLES.items():
        path.write_text(written(path.read_text(), name, table()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
