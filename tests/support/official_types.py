"""The official SDK type definitions as the check for what Foldwise sends: Responses input
items and tools (`ResponseInputItemParam` / `FunctionToolParam`), Chat messages
(`ChatCompletionMessageParam`) and Anthropic messages (the beta `BetaMessageParam`, which has
compaction blocks), validated with pydantic, so no backend stricter than the providers' own
has to be lenient."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from anthropic.types.beta import BetaMessageParam
from openai.types.chat import ChatCompletionMessageParam
from openai.types.responses import FunctionToolParam, ResponseInputItemParam
from pydantic import TypeAdapter

_ITEMS = TypeAdapter(list[ResponseInputItemParam])
_FUNCTION_TOOL = TypeAdapter(FunctionToolParam)
# The beta Messages types: the stable ones have no compaction block yet.
_ANTHROPIC = TypeAdapter(list[BetaMessageParam])
_CHAT = TypeAdapter(list[ChatCompletionMessageParam])


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


def assert_official_anthropic(messages: Sequence[Mapping[str, Any]]) -> None:
    """`messages` as the anthropic SDK's (beta) Messages API types take them."""
    consumed(_ANTHROPIC.validate_python(list(messages)))


def assert_official_chat(messages: Sequence[Mapping[str, Any]]) -> None:
    """`messages` as the openai SDK's Chat Completions types take them."""
    consumed(_CHAT.validate_python(list(messages)))
