"""Apps and clients for tests: settings isolated from the developer's environment."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

import httpx

from app.core.settings import Settings

MakeClient = Callable[..., Awaitable[httpx.AsyncClient]]


def make_settings(db_url: str, **overrides: Any) -> Settings:
    """Settings isolated from the developer's environment and .env file."""
    values: dict[str, Any] = {
        "database_url": db_url,
        "api_keys": "",
        "cors_origins": [],
        "anthropic_api_key": None,
        "anthropic_base_url": None,
        "openai_api_key": None,
        "openai_base_url": None,
        "gemini_api_key": None,
        "gemini_base_url": None,
        "models_file": None,
        "summarizer_template": None,
        # Folds as the budget needs them, waited for by the request that needs them: the
        # semantics most tests check; tests of folds ahead of need set their own.
        "fold_ahead": 1.0,
        "fold_hard_wait_s": 60.0,
    }
    values.update(overrides)
    return Settings(_env_file=None, **values)
