"""Client `cache_control` markers: where they sit, which values are valid, and the cap.

Anthropic reads a marker on a tool definition, on a content block of a message, and on a
block inside a `tool_result`'s content; it refuses a request with more than MAX_MARKERS of
them, a value other than `{"type": "ephemeral"}` (with an optional `ttl` of "5m" or "1h"),
and a marker on a `thinking` or `redacted_thinking` block. A `cache_control` key anywhere
else (a tool's input, a JSON schema property) is the client's data, never a marker.

Input validation (app/schemas/input_types.py) refuses invalid values and markers on thinking
blocks (`marker_problem`); what a context sends is capped to the limit by dropping the
oldest markers (`drop_oldest`): a later marker caches a longer prefix, so the newest are the
ones worth keeping.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import Any

# Anthropic prompt caching: "up to 4 cache breakpoints" per request.
MAX_MARKERS = 4
KEY = "cache_control"
TTLS = frozenset({"5m", "1h"})
# Blocks that cannot carry a marker (the API rejects cache_control on thinking blocks).
UNMARKABLE = frozenset({"thinking", "redacted_thinking"})


def _blocks(content: Any) -> Iterator[tuple[str, Mapping[str, Any]]]:
    """(path, block) of every block that may carry a marker, in request order: a tool
    result's inner blocks come before the result block itself."""
    if not isinstance(content, list):
        return
    for index, block in enumerate(content):
        if not isinstance(block, Mapping):
            continue
        if block.get("type") == "tool_result":
            for path, inner in _blocks(block.get("content")):
                yield f"{index}.content.{path}", inner
        yield str(index), block


def _value_problem(value: Any) -> str | None:
    if not isinstance(value, Mapping) or value.get("type") != "ephemeral":
        return 'must be {"type": "ephemeral"}, with an optional "ttl" of "5m" or "1h"'
    if not set(value) <= {"type", "ttl"}:
        return "has keys other than type and ttl"
    if "ttl" in value and value["ttl"] not in TTLS:
        return 'ttl must be "5m" or "1h"'
    return None


def marker_problem(message: Mapping[str, Any]) -> str | None:
    """What is wrong with the markers of a posted message (`content.<path>.cache_control: …`),
    or None."""
    for path, block in _blocks(message.get("content")):
        if KEY not in block:
            continue
        where = f"content.{path}.{KEY}"
        if block.get("type") in UNMARKABLE:
            return f"{where}: a {block.get('type')} block cannot carry a cache_control marker"
        problem = _value_problem(block[KEY])
        if problem:
            return f"{where} {problem}"
    return None


def tool_marker_problem(tool: Mapping[str, Any]) -> str | None:
    """What is wrong with a tool definition's marker, or None."""
    if KEY not in tool:
        return None
    problem = _value_problem(tool[KEY])
    return f"{KEY} {problem}" if problem else None


def count(messages: Sequence[Mapping[str, Any]], tools: Sequence[Mapping[str, Any]] | None) -> int:
    """Markers in `tools` and `messages`, as Anthropic counts them."""
    found = sum(KEY in tool for tool in tools or ())
    for message in messages:
        found += sum(KEY in block for _, block in _blocks(message.get("content")))
    return found


def drop_oldest(
    messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None, keep: int = MAX_MARKERS
) -> tuple[list[dict[str, Any]], list[dict[str, Any]] | None, int]:
    """(messages, tools, dropped): the oldest markers removed, in request order (tools, then
    messages), until `keep` remain. Only what changes is copied; inputs are not modified."""
    excess = count(messages, tools) - keep
    if excess <= 0:
        return messages, tools, 0
    dropped = excess
    kept_tools = None
    if tools is not None:
        kept_tools = []
        for tool in tools:
            if excess and KEY in tool:
                tool, excess = _unmarked(tool), excess - 1
            kept_tools.append(tool)
    kept_messages = []
    for message in messages:
        if excess:
            content, excess = _strip(message.get("content"), excess)
            if content is not message.get("content"):
                message = {**message, "content": content}
        kept_messages.append(message)
    return kept_messages, kept_tools, dropped


def _unmarked(block: Mapping[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in block.items() if k != KEY}


def _strip(content: Any, excess: int) -> tuple[Any, int]:
    """`content` with its first `excess` markers removed (the same object when none is)."""
    if not isinstance(content, list) or not excess:
        return content, excess
    out = list(content)
    for index, block in enumerate(content):
        if not excess:
            break
        if not isinstance(block, Mapping):
            continue
        changed = block
        if block.get("type") == "tool_result":
            inner, excess = _strip(block.get("content"), excess)
            if inner is not block.get("content"):
                changed = {**block, "content": inner}
        if excess and KEY in changed:
            changed, excess = _unmarked(changed), excess - 1
        out[index] = changed
    changed_any = any(new is not old for new, old in zip(out, content, strict=True))
    return (out if changed_any else content), excess
