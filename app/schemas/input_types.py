"""One normalization on input for every text and JSON value a request carries.

Whatever a request stores (ids, `client_id`, system prompts, message content, tool input,
metadata) or hands to the engine passes `check_json` once, through the `Text` and `Json`
types below, so SQLite and PostgreSQL see the same, readable values and no accepted write
can make a later read fail. Rejected with a 422 that names the field and the place inside it:

- lone UTF-16 surrogates (`"\\ud800"`): not encodable as UTF-8, they broke every later read;
- NUL (`"\\u0000"`): PostgreSQL text and JSONB cannot hold it (SQLite silently could);
- non-finite numbers (`NaN`, `Infinity`, `1e309`): not JSON; SQLite stored null instead;
- integers outside the signed 64-bit range, JSON nested deeper than `MAX_DEPTH`, and any list
  or object with more than `MAX_ITEMS` entries (a message of 100k blocks is not a message).
- `cache_control` markers the provider would refuse: a value other than
  `{"type": "ephemeral"}` (optional `ttl` "5m" / "1h"), or one on a thinking block
  (app/engine/markers.py).
"""

from __future__ import annotations

import json
import math
import re
from typing import Annotated, Any

from pydantic import AfterValidator, Field

from app.core.limits import MAX_SQL_INT
from app.engine.markers import marker_problem, tool_marker_problem

# Deeper JSON is not a conversation; Python's own limits (json, deepcopy) start near 1,000.
MAX_DEPTH = 64
# Entries of one list or object inside a value: content blocks, tool_use input keys, metadata.
# 2,000 parallel tool results in one message is already far beyond any provider's limits.
MAX_ITEMS = 2_000
# Integers: what PostgreSQL's bigint and SQLite's INTEGER hold.
MAX_INT = 2**63 - 1


class InputRefused(ValueError):
    """A value the service will not store; the message says where and why."""


def _text_problem(text: str) -> str | None:
    if "\x00" in text:
        return "contains NUL (\\u0000), which cannot be stored"
    if text.isascii():  # most text: no surrogate possible, and no copy made to find out
        return None
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return "contains a lone UTF-16 surrogate, which is not valid Unicode"
    return None


def check_json(value: Any, where: str = "", depth: int = 0) -> None:
    """Raise InputRefused naming the first place in `value` that cannot be stored as is."""
    try:
        _check(value, depth)
    except _Refused as refused:
        keys = [where, *reversed(refused.path)] if where else reversed(refused.path)
        label = ".".join(map(str, keys)) or "value"
        where_key = "a key of " if refused.in_key else ""
        raise InputRefused(f"{where_key}{label} {refused.reason}") from None


class _Refused(Exception):
    """Raised where a value is refused; each enclosing level adds its key on the way out
    (no path is built for the values that pass, which is nearly all of them)."""

    def __init__(self, reason: str, *, in_key: bool = False) -> None:
        self.reason, self.in_key, self.path = reason, in_key, list[Any]()


def _check(value: Any, depth: int) -> None:
    if isinstance(value, dict | list):
        _check_container(value, depth)
    elif isinstance(value, str):
        problem = _text_problem(value)
        if problem:
            raise _Refused(problem)
    elif isinstance(value, bool) or value is None:
        return
    elif isinstance(value, int):
        if not -MAX_INT - 1 <= value <= MAX_INT:
            raise _Refused("is outside the 64-bit integer range")
    elif isinstance(value, float) and not math.isfinite(value):
        raise _Refused("is not a finite number (NaN, Infinity or overflow)")


def _check_container(value: dict[Any, Any] | list[Any], depth: int) -> None:
    if depth >= MAX_DEPTH:
        raise _Refused(f"is nested more than {MAX_DEPTH} levels deep")
    if len(value) > MAX_ITEMS:
        raise _Refused(f"has more than {MAX_ITEMS} entries")
    items = value.items() if isinstance(value, dict) else enumerate(value)
    for key, item in items:
        if isinstance(key, str) and (problem := _text_problem(key)):
            raise _Refused(problem, in_key=True)
        # Most values are ASCII text without NUL: passed here, without a call.
        if type(item) is str and item.isascii() and "\x00" not in item:
            continue
        try:
            _check(item, depth + 1)
        except _Refused as refused:
            refused.path.append(key)
            raise


def _checked(value: Any) -> Any:
    check_json(value)
    return value


def _checked_message(message: dict[str, Any]) -> dict[str, Any]:
    """A message is checked like any JSON, and so are the OpenAI tool-call `arguments` it
    carries as a JSON *string*: the engine, the renderers and the summarizers parse them.
    Its `cache_control` markers must be ones the provider accepts (app/engine/markers.py)."""
    check_json(message)
    if problem := marker_problem(message):
        raise InputRefused(problem)
    calls = message.get("tool_calls")
    for i, call in enumerate(calls if isinstance(calls, list) else ()):
        function = call.get("function") if isinstance(call, dict) else None
        arguments = function.get("arguments") if isinstance(function, dict) else None
        _check_arguments(arguments, f"tool_calls.{i}.function.arguments")
    if message.get("type") == "function_call":  # a Responses item
        _check_arguments(message.get("arguments"), "arguments")
    return message


def _check_arguments(arguments: Any, where: str) -> None:
    if not isinstance(arguments, str):
        return
    try:
        parsed = json.loads(arguments)
    except RecursionError:
        raise InputRefused(f"{where} is nested more than {MAX_DEPTH} levels deep") from None
    except ValueError:
        return  # not JSON: every reader keeps it as plain text
    check_json(parsed, where, depth=1)


def _checked_tool(tool: dict[str, Any]) -> dict[str, Any]:
    check_json(tool)
    if problem := tool_marker_problem(tool):
        raise InputRefused(problem)
    return tool


Text = Annotated[str, AfterValidator(_checked)]
"""A string stored or processed as is: no NUL, no lone surrogate."""
Json = Annotated[dict[str, Any], AfterValidator(_checked)]
"""A JSON object stored or processed as is (a tool, metadata)."""

# An entry of a served context's prefix chain: a fingerprint (app/engine/prompt_cache.py).
CHAIN_ENTRY = re.compile(r"[0-9a-f]{1,64}")


def _checked_last_context(value: dict[str, Any]) -> dict[str, Any]:
    """`last_context` as an export carries it: per model, the record of the context served
    last (app/services/prompt_cache.py), checked as any JSON but for its prefix chain. The
    chain has an entry per element sent (tens of thousands for a long session in a large
    window): its entries must be fingerprints, and its length is bounded by what the
    session's messages can render to, which the import checks once it has read them
    (app/services/transfer.py)."""
    chains: dict[str, list[Any]] = {}
    rest: dict[str, Any] = {}
    for model, record in value.items():
        chain = record.get("chain") if isinstance(record, dict) else None
        if isinstance(chain, list):
            chains[model], record = chain, {**record, "chain": []}
        rest[model] = record
    check_json(rest)
    for model, chain in chains.items():
        if not all(isinstance(entry, str) and CHAIN_ENTRY.fullmatch(entry) for entry in chain):
            raise InputRefused(f"{model}.chain entries are fingerprints: 1-64 hex digits")
    return value


LastContextJson = Annotated[dict[str, Any], AfterValidator(_checked_last_context)]
"""A session's `last_context` as an export carries it (see `_checked_last_context`)."""
MessageJson = Annotated[dict[str, Any], AfterValidator(_checked_message)]
"""A posted message: `Json`, plus the JSON inside OpenAI tool-call `arguments` strings, and
valid `cache_control` markers."""
ToolJson = Annotated[dict[str, Any], AfterValidator(_checked_tool)]
"""A tool definition: `Json` with a valid `cache_control` marker, if any."""
SqlInt = Annotated[int, Field(ge=0, le=MAX_SQL_INT)]
"""A non-negative integer that reaches SQL (seqs, limits, counts)."""
TokenCount = Annotated[int, Field(le=MAX_SQL_INT)]
"""A token amount from a client (budgets, reserves); bounds come with each field."""


# Tool call ids: what Anthropic (`toolu_…`, ^[A-Za-z0-9_-]+$) and OpenAI (`call_…`) issue,
# plus '.' and ':'; ASCII only, so every database stores and finds them byte for byte.
TOOL_ID = re.compile(r"[A-Za-z0-9_.:-]{1,256}")


IdPaths = list[tuple[str, Any]]


def _tool_ids(message: dict[str, Any]) -> tuple[IdPaths, IdPaths]:
    """(calls, results) of one posted message as (path, id) pairs, in any of the shapes."""
    calls: IdPaths = []
    results: IdPaths = []
    kind = message.get("type")  # Responses items carry `call_id`
    if kind in ("function_call", "function_call_output") and "call_id" in message:
        (calls if kind == "function_call" else results).append(("call_id", message["call_id"]))
    if "tool_call_id" in message:
        results.append(("tool_call_id", message["tool_call_id"]))
    tool_calls = message.get("tool_calls")
    for i, call in enumerate(tool_calls if isinstance(tool_calls, list) else ()):
        if isinstance(call, dict) and "id" in call:
            calls.append((f"tool_calls.{i}.id", call["id"]))
    _gemini_ids(message.get("parts"), calls, results)
    content = message.get("content")
    for i, block in enumerate(content if isinstance(content, list) else ()):
        kind = block.get("type") if isinstance(block, dict) else None
        if kind == "tool_use" and "id" in block:
            calls.append((f"content.{i}.id", block["id"]))
        elif kind == "tool_result" and "tool_use_id" in block:
            results.append((f"content.{i}.tool_use_id", block["tool_use_id"]))
    return calls, results


def _gemini_ids(parts: Any, calls: IdPaths, results: IdPaths) -> None:
    """The ids of a Gemini content's function calls and responses, where it gives them."""
    for i, part in enumerate(parts if isinstance(parts, list) else ()):
        for key, found in (("functionCall", calls), ("functionResponse", results)):
            value = part.get(key, part.get(SNAKE_KEYS[key])) if isinstance(part, dict) else None
            if isinstance(value, dict) and "id" in value:
                found.append((f"parts.{i}.{key}.id", value["id"]))


SNAKE_KEYS = {"functionCall": "function_call", "functionResponse": "function_response"}


def gemini_contents(
    messages: list[dict[str, Any]] | None, contents: list[dict[str, Any]] | None
) -> list[dict[str, Any]] | None:
    """The posted messages: `messages`, or Gemini `contents` in their place (never both)."""
    if contents is None:
        return messages
    if messages:
        raise ValueError("give either 'messages' or Gemini 'contents', not both")
    for index, content in enumerate(contents):
        if not ("parts" in content and "content" not in content):
            raise ValueError(f"contents[{index}]: a Gemini content has a role and parts")
    check_tool_ids(contents)
    return contents


def check_tool_ids(messages: list[dict[str, Any]]) -> list[str]:
    """Every tool id well-formed and every call id used once in `messages`; returns the call
    ids. A reused call id made the pairing of calls and results ambiguous (and providers
    reject it), so it is refused here rather than repaired at read time."""
    seen: dict[str, str] = {}
    for index, message in enumerate(messages):
        calls, results = _tool_ids(message)
        for path, value in calls + results:
            if not isinstance(value, str) or not TOOL_ID.fullmatch(value):
                raise InputRefused(
                    f"messages.{index}.{path}: a tool id is 1-256 characters of A-Z a-z 0-9 _ . : -"
                )
        if len(seen) + len(calls) > MAX_ITEMS:
            raise InputRefused(f"more than {MAX_ITEMS} tool calls in one request")
        for path, value in calls:
            where = f"messages.{index}.{path}"
            if value in seen:
                used = seen[value]
                raise InputRefused(f"{where}: tool call id {value!r} is already used by {used}")
            seen[value] = where
    return list(seen)
