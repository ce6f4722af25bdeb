"""A turn's response cache key is a GET …/context query string (app/services/turns.py): it must
parse back to exactly the options the turn serves, or a GET with those bytes could be
answered another query's body."""

from __future__ import annotations

from typing import Any
from urllib.parse import parse_qsl

import pytest

from app.schemas.context import ContextQuery
from app.schemas.turns import TurnContext
from app.services.context_load import context_options
from app.services.turns import query_key


@pytest.mark.parametrize(
    ("given", "expected"),
    [
        ({}, b""),
        ({"format": "anthropic", "summarize": "auto", "explain": False}, b""),  # the defaults
        ({"max_tokens": 8000}, b"max_tokens=8000"),
        (
            {"keep_recent": 4, "format": "openai", "model": "gpt-4o", "explain": True},
            b"model=gpt-4o&format=openai&explain=true&keep_recent=4",
        ),
        (
            {"summarizer": "openai:gpt-5-mini", "threshold": 0.55, "pin_first_message": False},
            b"threshold=0.55&pin_first_message=false&summarizer=openai%3Agpt-5-mini",
        ),
    ],
)
def test_the_key_is_the_query_string_a_client_sends(given: dict[str, Any], expected: bytes) -> None:
    assert query_key(TurnContext(**given)) == expected


@pytest.mark.parametrize(
    "given",
    [
        {"model": "claude-sonnet-4-5", "max_tokens": 1, "summarize": "never"},
        {"format": "gemini", "threshold": 1e-05, "fold_target": 1, "prune_at_least": 0},
        {"summary_placement": "messages", "strategy": "hybrid", "cache_breakpoints": False},
        {"model": "my model/with?odd&chars=", "keep_media": 0, "max_summary_tokens": 50},
    ],
)
def test_the_key_parses_back_to_the_turns_options(given: dict[str, Any]) -> None:
    turn = TurnContext(**given)
    parsed = ContextQuery(**dict(parse_qsl(query_key(turn).decode(), strict_parsing=False)))
    assert context_options(parsed) == context_options(turn)
