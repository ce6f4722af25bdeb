"""Settings keys for one context: request query > session `settings` > FOLDWISE_ defaults."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from app.core.settings import ContextDefaults
from app.engine.budget import ContextSettings

# The context settings keys (docs/reference.md §Settings) that shape a context (strategy
# picks the summarizer instead).
ENGINE_KEYS = (
    "threshold",
    "reserved_output_tokens",
    "keep_recent",
    "pin_first_message",
    "summary_placement",
    "fold_target",
    "max_summary_tokens",
    "prune_target",
    "prune_at_least",
    "cache_breakpoints",
)
SETTINGS_KEYS = (*ENGINE_KEYS, "strategy")


def merged_settings(defaults: ContextDefaults, *layers: Mapping[str, Any] | None) -> dict[str, Any]:
    """Every settings key, each taken from the last layer that sets it (None = not set)."""
    values = {key: getattr(defaults, key) for key in SETTINGS_KEYS}
    for layer in layers:
        for key, value in (layer or {}).items():
            if key in values and value is not None:
                values[key] = value
    return values


def resolve_settings(
    defaults: ContextDefaults,
    session_settings: Mapping[str, Any] | None,
    overrides: Mapping[str, Any] | None,
) -> tuple[ContextSettings, str]:
    """The engine settings and the summarizer strategy for one request."""
    values = merged_settings(defaults, session_settings, overrides)
    engine = ContextSettings(**{key: values[key] for key in ENGINE_KEYS})
    return engine, str(values["strategy"])
