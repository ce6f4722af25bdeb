"""A refused value is named by its whole path, outermost key first (app/schemas/input_types.py)."""

from __future__ import annotations

from typing import Any

import pytest

from app.schemas.input_types import InputRefused, check_json


@pytest.mark.parametrize(
    ("value", "where", "message"),
    [
        ({"a": [1, {"b": "x\x00"}]}, "", "a.1.b contains NUL"),
        ({"a": [1, {"b": "x\x00"}]}, "metadata", "metadata.a.1.b contains NUL"),
        ({"m": {"k\ud800": 1}}, "", "a key of m contains a lone UTF-16 surrogate"),
        ([1.0, float("inf")], "input", "input.1 is not a finite number"),
        ("\ud800", "", "value contains a lone UTF-16 surrogate"),
        ({"deep": [2**64]}, "", "deep.0 is outside the 64-bit integer range"),
    ],
)
def test_the_first_refused_place_is_named(value: Any, where: str, message: str) -> None:
    with pytest.raises(InputRefused) as refused:
        check_json(value, where)
    assert str(refused.value).startswith(message)


def test_storable_values_pass() -> None:
    check_json({"text": "naïve ünïcode 🙂", "n": [1, 2.5, None, True], "nested": {"a": {}}})
