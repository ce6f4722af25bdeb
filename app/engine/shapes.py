"""Validate incoming messages and tool definitions in Anthropic or OpenAI shape, losslessly.

A client posts exactly what it sends its provider; what it posts is what is stored. So
validation only rejects what no provider would accept (and what would break tool-call
pairing later), and never rewrites content: unknown block types pass through untouched,
and provider-specific top-level keys (`refusal`, `audio`, `cache_control`, …) are kept in
`metadata["extra"]`. The one default: an assistant message carrying `tool_calls` may have
null content, stored as "".

Every error is an `InvalidMessage` (or `InvalidTools`) whose details carry the message
index, a JSON path such as `messages[3].content[1].tool_use_id`, and the reason.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, NoReturn, cast

from app.core.content import Block, Content
from app.core.errors import InvalidItem, InvalidMessage, InvalidTools
from app.engine.gemini_tools import DECLARATION_KEYS, is_gemini_tool
from app.engine.types import Role

ROLES: tuple[Role, ...] = ("user", "assistant", "system", "tool")
KNOWN_KEYS = frozenset(
    {"role", "content", "name", "tool_calls", "tool_call_id", "metadata", "client_id"}
)
EXTRA_KEY = "extra"
# client_id is an idempotency key stored in an indexed column: keep it short.
MAX_CLIENT_ID_LENGTH = 256
# Block types that may only appear in one direction of the conversation.
_FORBIDDEN_BLOCKS: dict[str, frozenset[str]] = {
    "assistant": frozenset({"tool_result"}),
    "user": frozenset({"tool_use"}),
}


@dataclass(frozen=True)
class NormalizedMessage:
    role: Role
    content: Content
    metadata: dict[str, Any]
    client_id: str | None
    # The Chat-shaped fields: a Responses item or a Gemini content sets at most one of them.
    name: str | None = None
    tool_calls: list[dict[str, Any]] | None = None
    tool_call_id: str | None = None


def _fail(index: int, path: str, reason: str) -> NoReturn:
    raise InvalidMessage(f"{path}: {reason}", {"index": index, "path": path, "reason": reason})


def _optional_str(raw: Mapping[str, Any], key: str, index: int, base: str) -> str | None:
    value = raw.get(key)
    if value is not None and (not isinstance(value, str) or not value):
        _fail(index, f"{base}.{key}", "must be a non-empty string")
    return value


def normalize_message(raw: Mapping[str, Any], index: int = 0) -> NormalizedMessage:
    """Validate one posted message; raise InvalidMessage with its path on the first problem."""
    base = f"messages[{index}]"
    if not isinstance(raw, Mapping):
        _fail(index, base, "a message must be a JSON object")
    role = raw.get("role")
    if role not in ROLES:
        _fail(index, f"{base}.role", f"role must be one of {', '.join(ROLES)}, got {role!r}")
    name = _optional_str(raw, "name", index, base)
    tool_call_id = _optional_str(raw, "tool_call_id", index, base)
    client_id = _optional_str(raw, "client_id", index, base)
    if client_id is not None and len(client_id) > MAX_CLIENT_ID_LENGTH:
        _fail(index, f"{base}.client_id", f"longer than {MAX_CLIENT_ID_LENGTH} characters")
    if role == "tool" and tool_call_id is None:
        _fail(index, f"{base}.tool_call_id", "a tool message needs the tool_call_id it answers")
    if role != "tool" and tool_call_id is not None:
        _fail(index, f"{base}.tool_call_id", "only tool messages carry a tool_call_id")
    tool_calls = _tool_calls(raw.get("tool_calls"), role, index, base)
    content = _content(raw.get("content"), role, bool(tool_calls), index, base)
    return NormalizedMessage(
        role=cast(Role, role),
        content=content,
        name=name,
        tool_calls=tool_calls,
        tool_call_id=tool_call_id,
        metadata=_metadata(raw, index, base),
        client_id=client_id,
    )


def _metadata(raw: Mapping[str, Any], index: int, base: str) -> dict[str, Any]:
    metadata = raw.get("metadata")
    if metadata is None:
        metadata = {}
    elif not isinstance(metadata, dict):
        _fail(index, f"{base}.metadata", "metadata must be an object")
    if raw.keys() <= KNOWN_KEYS:  # the common case, without building an empty dict
        return metadata
    extra = {key: value for key, value in raw.items() if key not in KNOWN_KEYS}
    if EXTRA_KEY in metadata:
        _fail(
            index,
            f"{base}.metadata.{EXTRA_KEY}",
            f"reserved for the message's provider-specific keys ({', '.join(sorted(extra))})",
        )
    return {**metadata, EXTRA_KEY: extra}


def _tool_calls(value: Any, role: str, index: int, base: str) -> list[dict[str, Any]] | None:
    if value is None:
        return None
    path = f"{base}.tool_calls"
    if role != "assistant":
        _fail(index, path, "only assistant messages carry tool_calls")
    if not isinstance(value, list):
        _fail(index, path, "tool_calls must be a list")
    for position, call in enumerate(value):
        call_path = f"{path}[{position}]"
        if not isinstance(call, dict):
            _fail(index, call_path, "a tool call must be an object")
        if not isinstance(call.get("id"), str) or not call["id"]:
            _fail(index, f"{call_path}.id", "a tool call needs a non-empty string id")
        if call.get("type", "function") != "function":
            continue  # other call types (e.g. "custom") are kept as posted
        function = call.get("function")
        if not isinstance(function, dict):
            _fail(index, f"{call_path}.function", "must be an object with name and arguments")
        if not isinstance(function.get("name"), str) or not function["name"]:
            _fail(index, f"{call_path}.function.name", "must be a non-empty string")
        if not isinstance(function.get("arguments"), str):
            _fail(index, f"{call_path}.function.arguments", "must be a string (JSON text)")
    return value


def _content(value: Any, role: str, has_tool_calls: bool, index: int, base: str) -> Content:
    path = f"{base}.content"
    if value is None:
        if role == "assistant" and has_tool_calls:
            return ""
        _fail(index, path, "content is required (a string or a list of content blocks)")
    if isinstance(value, str):
        return value
    if not isinstance(value, list):
        _fail(index, path, f"content must be a string or a list, got {type(value).__name__}")
    forbidden = _FORBIDDEN_BLOCKS.get(role, frozenset())
    for position, block in enumerate(value):
        block_path = f"{path}[{position}]"
        _check_block(block, index, block_path)
        kind = block["type"]
        if kind in forbidden:
            _fail(index, f"{block_path}.type", f"{kind} blocks cannot appear in a {role} message")
        if role == "system" and kind != "text":
            _fail(index, f"{block_path}.type", "system messages may only hold text blocks")
    return cast(list[Block], value)


def _check_block(block: Any, index: int, path: str) -> None:
    if not isinstance(block, dict):
        _fail(index, path, "a content block must be an object")
    kind = block.get("type")
    if not isinstance(kind, str) or not kind:
        _fail(index, f"{path}.type", "a content block needs a string type")
    check = _BLOCK_CHECKS.get(kind)
    if check is not None:
        check(block, index, path)


def _check_text(block: dict[str, Any], index: int, path: str) -> None:
    if not isinstance(block.get("text"), str):
        _fail(index, f"{path}.text", "a text block needs a string text")


def _check_tool_use(block: dict[str, Any], index: int, path: str) -> None:
    for key in ("id", "name"):
        if not isinstance(block.get(key), str) or not block[key]:
            _fail(index, f"{path}.{key}", f"a tool_use block needs a non-empty string {key}")
    if not isinstance(block.get("input"), dict):
        _fail(index, f"{path}.input", "a tool_use block needs an object input")


def _check_tool_result(block: dict[str, Any], index: int, path: str) -> None:
    if not isinstance(block.get("tool_use_id"), str) or not block["tool_use_id"]:
        _fail(index, f"{path}.tool_use_id", "a tool_result block needs its tool_use_id")
    nested = block.get("content")
    if isinstance(nested, list):
        for position, inner in enumerate(nested):
            _check_block(inner, index, f"{path}.content[{position}]")
    elif nested is not None and not isinstance(nested, str):
        _fail(index, f"{path}.content", "tool_result content must be a string or a list")


# The block types whose fields Foldwise reads; any other type is kept as the client sent it.
_BLOCK_CHECKS: dict[str, Callable[[dict[str, Any], int, str], None]] = {
    "text": _check_text,
    "tool_use": _check_tool_use,
    "tool_result": _check_tool_result,
}


def own_keys(raw: Mapping[str, Any], index: int) -> tuple[str | None, dict[str, Any]]:
    """The Foldwise keys of a Responses item or a Gemini content: `client_id` and `metadata`
    (InvalidItem naming the path)."""
    client_id = raw.get("client_id")
    if client_id is not None and (
        not isinstance(client_id, str) or not client_id or len(client_id) > MAX_CLIENT_ID_LENGTH
    ):
        reason = f"must be a non-empty string of at most {MAX_CLIENT_ID_LENGTH} characters"
        _fail_item(index, f"messages[{index}].client_id", reason)
    metadata = raw.get("metadata") or {}
    if not isinstance(metadata, dict):
        _fail_item(index, f"messages[{index}].metadata", "metadata must be an object")
    if EXTRA_KEY in metadata:
        reason = "reserved for the provider-specific keys of the message"
        _fail_item(index, f"messages[{index}].metadata.{EXTRA_KEY}", reason)
    return client_id, dict(metadata)


def _fail_item(index: int, path: str, reason: str) -> NoReturn:
    raise InvalidItem(f"{path}: {reason}", {"index": index, "path": path, "reason": reason})


def validate_tools(tools: Any) -> list[dict[str, Any]]:
    """Check Anthropic or OpenAI tool definitions; return them unchanged."""
    if not isinstance(tools, list):
        raise InvalidTools("tools must be a list", {"path": "tools", "reason": "not a list"})
    seen: set[str] = set()
    for position, tool in enumerate(tools):
        for path, name in _tool_names(tool, f"tools[{position}]", position):
            if name in seen:
                _fail_tool(position, path, f"duplicate tool name {name!r}")
            seen.add(name)
    return tools


def _tool_names(tool: Any, path: str, position: int) -> list[tuple[str, str]]:
    """(path, name) of each tool a definition holds: one, or a Gemini tool's declarations
    (a Gemini server tool is named by its key: `googleSearch`)."""
    if not (isinstance(tool, dict) and is_gemini_tool(tool)):
        return [(f"{path}.name", _tool_name(tool, path, position))]
    names = [(f"{path}.{key}", key) for key in tool if key not in DECLARATION_KEYS]
    for key in DECLARATION_KEYS & tool.keys():
        found = tool[key]
        if not isinstance(found, list):
            _fail_tool(position, f"{path}.{key}", "must be a list of function declarations")
        for i, declaration in enumerate(found):
            where = f"{path}.{key}[{i}]"
            if not isinstance(declaration, dict):
                _fail_tool(position, where, "a function declaration must be an object")
            _require_name(declaration, where, position)
            for schema in ("parameters", "parametersJsonSchema", "parameters_json_schema"):
                if schema in declaration and not isinstance(declaration[schema], dict):
                    _fail_tool(position, f"{where}.{schema}", "must be a JSON schema object")
            names.append((f"{where}.name", str(declaration["name"])))
    return names


def _tool_name(tool: Any, path: str, position: int) -> str:
    if not isinstance(tool, dict):
        _fail_tool(position, path, "a tool definition must be an object")
    kind = tool.get("type")
    if kind == "function" and "function" in tool:  # OpenAI Chat Completions
        function = tool["function"]
        if not isinstance(function, dict):
            _fail_tool(position, f"{path}.function", "must be an object")
        _require_name(function, f"{path}.function", position)
        if "parameters" in function and not isinstance(function["parameters"], dict):
            _fail_tool(position, f"{path}.function.parameters", "must be a JSON schema object")
        return str(function["name"])
    _require_name(tool, path, position)
    if kind is None or kind == "custom":  # Anthropic client tool
        if not isinstance(tool.get("input_schema"), dict):
            _fail_tool(position, f"{path}.input_schema", "must be a JSON schema object")
    elif not isinstance(kind, str):
        _fail_tool(position, f"{path}.type", "must be a string")
    # Anything else is a provider server tool ({"type": "web_search_20250305", ...}): kept.
    return str(tool["name"])


def _require_name(holder: dict[str, Any], path: str, position: int) -> None:
    if not isinstance(holder.get("name"), str) or not holder["name"]:
        _fail_tool(position, f"{path}.name", "a tool needs a non-empty string name")
    if "description" in holder and not isinstance(holder["description"], str):
        _fail_tool(position, f"{path}.description", "must be a string")


def _fail_tool(position: int, path: str, reason: str) -> NoReturn:
    raise InvalidTools(f"{path}: {reason}", {"index": position, "path": path, "reason": reason})
