"""Counting every `cache_control` key in a response: an upper bound of the markers a
provider reads (it ignores such keys inside tool inputs and schemas), for tests that hold a
response to the limit and for the prompt-cache bench's provider model (bench/cache_model.py).
The service counts markers as the provider does, in app/engine/markers.py."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any


def count_markers(value: Any) -> int:
    """How many `cache_control` keys `value` (messages, tools) already carries."""
    items: Iterable[Any]
    if isinstance(value, dict):
        found, items = int("cache_control" in value), value.values()
    elif isinstance(value, list):
        found, items = 0, value
    else:
        return 0
    for item in items:  # a loop, not sum() over a generator: this walks every block
        if isinstance(item, (dict, list)):
            found += count_markers(item)
    return found
