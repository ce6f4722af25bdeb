"""Counting what a client posts, as the context's `usage` counts it: POST /count-tokens and
the part of a provider request that Foldwise did not serve (POST …/usage `unserved`)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from app.engine.items import normalize_posted
from app.engine.shapes import validate_tools
from app.tokens.counter import TiktokenCounter


def count_posted(
    counter: TiktokenCounter,
    *,
    text: str | None = None,
    messages: Sequence[Mapping[str, Any]] | None = None,
    tools: Sequence[Mapping[str, Any]] | None = None,
) -> int:
    """`text` as plain text, each message with its overhead (any accepted shape, Responses
    items grouped as at append), `tools` as a request's tool list."""
    tokens = counter.count_text(text) if text else 0
    tokens += sum(counter.count_message(p.message) for p in normalize_posted(messages or []))
    if tools:
        tokens += counter.count_tools(validate_tools(tools))
    return tokens
