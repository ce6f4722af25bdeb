"""The official `openai` type definitions as the check for what Foldwise sends as Responses
input: items and tools validated with pydantic over `ResponseInputItemParam` /
`FunctionToolParam`, so no backend stricter than api.openai.com has to be lenient."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from openai.types.responses import FunctionToolParam, ResponseInputItemParam
from pydantic import TypeAdapter

_ITEMS = TypeAdapter(list[ResponseInputItemParam])
_FUNCTION_TOOL = TypeAdapter(FunctionToolParam)


def consumed(value: Any) -> Any:
    """pydantic validates an `Iterable[...]` field lazily: reading it is what validates it."""
    if isinstance(value, Mapping):
        return {key: consumed(item) for key, item in value.items()}
    if isinstance(value, str | bytes) or not isinstance(value, Iterable):
        return value
    return [consumed(item) for item in value]


def assert_official_items(items: Sequence[Mapping[str, Any]]) -> None:
    """Raises pydantic's ValidationError naming the first item the types refuse."""
    consumed(_ITEMS.validate_python(list(items)))


def assert_official_function_tools(tools: Sequence[Mapping[str, Any]]) -> None:
    for tool in tools:
        consumed(_FUNCTION_TOOL.validate_python(tool))
