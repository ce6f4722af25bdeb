"""The official SDK type definitions as the check for what Foldwise sends: Responses input
items and tools (`ResponseInputItemParam` / `FunctionToolParam`), Chat messages
(`ChatCompletionMessageParam`), Anthropic messages (the beta `BetaMessageParam`, which has
compaction blocks) and Gemini contents, tools and system instruction (google-genai's
`Content` / `Tool` / `GenerateContentConfig`), validated with pydantic, so no backend stricter
than the providers' own has to be lenient."""

from __future__ import annotations

import base64
import json
import warnings
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from anthropic.types.beta import BetaMessageParam
from google.genai import types as genai
from openai.types.chat import ChatCompletionMessageParam
from openai.types.responses import FunctionToolParam, ResponseInputItemParam
from pydantic import BaseModel, TypeAdapter, ValidationError
from pydantic.alias_generators import to_camel

_ITEMS = TypeAdapter(list[ResponseInputItemParam])
_FUNCTION_TOOL = TypeAdapter(FunctionToolParam)
# The beta Messages types: the stable ones have no compaction block yet.
_ANTHROPIC = TypeAdapter(list[BetaMessageParam])
_CHAT = TypeAdapter(list[ChatCompletionMessageParam])

GEMINI_ROLES = ("user", "model")
# A Part's `data` oneof: exactly one per part (`thought`, `thoughtSignature`, `videoMetadata`…
# ride beside it). toolCall / toolResponse are the server-side tool calls Gemini 3 sends.
GEMINI_DATA_FIELDS = (
    "text",
    "inlineData",
    "fileData",
    "functionCall",
    "functionResponse",
    "executableCode",
    "codeExecutionResult",
    "toolCall",
    "toolResponse",
)
# The `bytes` fields: base64 in JSON, read back url-safe.
_GEMINI_BYTES = frozenset({"data", "thoughtSignature"})


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


def assert_official_gemini(
    contents: Sequence[Mapping[str, Any]],
    system: str | None = None,
    tools: Sequence[Mapping[str, Any]] | None = None,
) -> None:
    """A `format=gemini` request as generateContent's REST body takes it: `contents` in the
    camelCase JSON form, `system` sent as systemInstruction, `tools` as Gemini Tool dicts.

    Each is validated with google-genai's own types (which forbid unknown keys) from its JSON,
    and must read back unchanged, so a snake_case key, a null or a coerced value fails too.
    On top, what the API refuses and the types let through: a role other than user / model,
    a content without parts, a part with no or several data fields, a functionResponse that
    answers no functionCall of the model content right before it (by id where both have one,
    else by name). Raises AssertionError listing every problem."""
    problems: list[str] = []
    for index, content in enumerate(contents):
        where = f"contents[{index}]"
        problems += _gemini_model(genai.Content, content, where)
        problems += _gemini_content_rules(content, where)
    problems += _gemini_unanswered_responses(contents)
    tool_problems = [
        problem
        for index, tool in enumerate(tools or ())
        for problem in _gemini_model(genai.Tool, tool, f"tools[{index}]")
    ]
    problems += tool_problems
    if system is not None and not isinstance(system, str):
        problems.append(f"system: {type(system).__name__}, not a string")
    # The two together as the SDK sends them; tools already refused one by one are left out.
    config = {
        "systemInstruction": system,
        "tools": None if tools is None or tool_problems else list(tools),
    }
    problems += _gemini_model(
        genai.GenerateContentConfig,
        {key: value for key, value in config.items() if value is not None},
        "config",
        compare=False,
    )
    assert not problems, "Gemini would refuse this request:\n" + "\n".join(
        f"- {problem}" for problem in problems
    )


def _gemini_model(
    model: type[BaseModel], value: Any, where: str, *, compare: bool = True
) -> list[str]:
    """Validates `value` from its JSON (so bytes fields are read as base64, as the API does),
    turning the SDK's warnings (an unknown enum value is only warned about) into problems."""
    try:
        raw = json.dumps(value)
    except (TypeError, ValueError) as error:
        return [f"{where}: not JSON ({error})"]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            parsed = model.model_validate_json(raw)
        except ValidationError as error:
            return [f"{where}: {error}"]
    problems = [f"{where}: {warning.message}" for warning in caught]
    if compare:
        kept = parsed.model_dump(by_alias=True, exclude_none=True, mode="json")
        problems += _gemini_lost(value, kept, where, key="")
    return problems


def _gemini_lost(sent: Any, kept: Any, where: str, key: str) -> list[str]:
    """Where the dumped model differs from what was sent: keys it does not keep (unknown,
    snake_case or null) and values it changed. An enum read in another case (`"object"` →
    `"OBJECT"`) and base64 read back url-safe are the same value."""
    if isinstance(sent, Mapping):
        if not isinstance(kept, Mapping):
            return [f"{where}: read as {kept!r}"]
        problems = []
        for name, value in sent.items():
            if name in kept:
                problems += _gemini_lost(value, kept[name], f"{where}.{name}", name)
            elif value is None:
                problems.append(f"{where}.{name}: null (leave the key out)")
            else:
                problems.append(f"{where}.{name}: not kept by the types (not its camelCase name?)")
        return problems
    if isinstance(sent, list):
        if not isinstance(kept, list) or len(kept) != len(sent):
            return [f"{where}: read as {kept!r}"]
        return [
            problem
            for index, (item, read) in enumerate(zip(sent, kept, strict=True))
            for problem in _gemini_lost(item, read, f"{where}[{index}]", key)
        ]
    if isinstance(sent, str) and isinstance(kept, str):
        same = (
            _b64decode(sent) == _b64decode(kept)
            if key in _GEMINI_BYTES
            else sent.casefold() == kept.casefold()
        )
    elif isinstance(sent, bool) or isinstance(kept, bool):
        same = sent is kept
    elif isinstance(sent, int | float) and isinstance(kept, int | float):
        same = sent == kept
    else:
        same = type(sent) is type(kept) and sent == kept
    return [] if same else [f"{where}: {sent!r} read as {kept!r}"]


def _b64decode(text: str) -> bytes:
    url_safe = text.replace("+", "-").replace("/", "_")
    return base64.urlsafe_b64decode(url_safe + "=" * (-len(url_safe) % 4))


def _gemini_parts(content: Any) -> list[Mapping[str, Any]]:
    parts = content.get("parts") if isinstance(content, Mapping) else None
    if not isinstance(parts, list):
        return []
    return [part for part in parts if isinstance(part, Mapping)]


def _gemini_content_rules(content: Any, where: str) -> list[str]:
    if not isinstance(content, Mapping):
        return []  # the types said so
    problems = []
    if content.get("role") not in GEMINI_ROLES:
        problems.append(f"{where}.role: {content.get('role')!r}, not 'user' or 'model'")
    if not content.get("parts"):
        problems.append(f"{where}: no parts")
    for index, part in enumerate(_gemini_parts(content)):
        data = [name for name in part if to_camel(name) in GEMINI_DATA_FIELDS]
        if len(data) != 1:
            problems.append(
                f"{where}.parts[{index}]: {len(data)} data fields {data}, Gemini takes exactly one"
                f" of {', '.join(GEMINI_DATA_FIELDS)}"
            )
    return problems


def _gemini_unanswered_responses(contents: Sequence[Mapping[str, Any]]) -> list[str]:
    """Each functionResponse answers a functionCall of the model content right before its
    content (each call once): by id, or by name between a call and a response without ids."""
    problems = []
    for index, content in enumerate(contents):
        before = contents[index - 1] if index else None
        model_turn = isinstance(before, Mapping) and before.get("role") == "model"
        open_calls = [
            part["functionCall"]
            for part in _gemini_parts(before)
            if model_turn and isinstance(part.get("functionCall"), Mapping)
        ]
        for number, part in enumerate(_gemini_parts(content)):
            response = part.get("functionResponse")
            if not isinstance(response, Mapping):
                continue
            match = next(
                (at for at, call in enumerate(open_calls) if _gemini_answers(response, call)),
                None,
            )
            if match is None:
                problems.append(
                    f"contents[{index}].parts[{number}].functionResponse"
                    f" (name {response.get('name')!r}, id {response.get('id')!r}) answers no"
                    " functionCall of the model content right before it"
                )
            else:
                del open_calls[match]
    return problems


def _gemini_answers(response: Mapping[str, Any], call: Mapping[str, Any]) -> bool:
    """By id where the response has one; a response without an id answers a call of its name
    that has none either (a call with an id is answered by that id)."""
    if response.get("id") or call.get("id"):
        return bool(response.get("id") == call.get("id"))
    return bool(response.get("name") == call.get("name"))
