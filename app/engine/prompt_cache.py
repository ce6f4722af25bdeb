"""Prompt caching: Anthropic `cache_control` breakpoints, and the prefix a context shares with
the previous one.

Providers bill a cached prefix at about a tenth of the input price, and only when a request
starts with exactly a prefix they have seen (Anthropic: up to a `cache_control` breakpoint;
OpenAI: automatically). Two breakpoints pay: the end of the system prompt + summary (stable
until the next fold) and the newest message (the whole request, read back next turn). The
Messages API accepts at most MAX_BREAKPOINTS per request, markers the client stored in its
messages or tools included, so ours are placed only while that many are free.

`prefix_chain` fingerprints a rendered context element by element (the system part, then each
message, markers left out): two contexts share a prefix of k elements when their first k
chain values are equal, which the service compares with the previous context it served.
"""

from __future__ import annotations

import copy
import hashlib
import json
from collections.abc import Iterable, Sequence
from typing import Any

# Anthropic prompt caching: "up to 4 cache breakpoints" per request.
MAX_BREAKPOINTS = 4
CACHE_CONTROL: dict[str, str] = {"type": "ephemeral"}
# Blocks that cannot carry a marker (the API rejects cache_control on thinking blocks).
UNMARKABLE = frozenset({"thinking", "redacted_thinking"})
# 16 hex digits of SHA-256 per element: collisions are out of reach for one session.
CHAIN_HEX = 16
# json.dumps(sort_keys=True, ensure_ascii=False, default=str), its encoder built once.
_CANONICAL = json.JSONEncoder(sort_keys=True, ensure_ascii=False, default=str)


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


def _mark_message(message: dict[str, Any]) -> dict[str, Any] | None:
    """A copy of `message` with a marker on its last markable block, or None if it has none."""
    content = message.get("content")
    if isinstance(content, str):
        return {**message, "content": [{"type": "text", "text": content, **_marker()}]}
    if not isinstance(content, list):
        return None
    for index in range(len(content) - 1, -1, -1):
        block = content[index]
        if isinstance(block, dict) and block.get("type") not in UNMARKABLE:
            marked = list(content)
            marked[index] = {**block, **_marker()}
            return {**message, "content": marked}
    return None


def _marker() -> dict[str, Any]:
    return {"cache_control": dict(CACHE_CONTROL)}


def place_breakpoints(
    system: str | None,
    messages: list[dict[str, Any]],
    tools: list[dict[str, Any]] | None,
    *,
    summary_ack_index: int | None,
) -> tuple[str | list[dict[str, Any]] | None, list[dict[str, Any]], int]:
    """(system, messages, markers placed) with breakpoints on the newest message and at the
    end of system + summary (the system block, or the summary pair's answer when the summary
    is sent as messages), within the provider's limit. Inputs are not modified."""
    free = MAX_BREAKPOINTS - count_markers(messages) - count_markers(tools or [])
    out = list(messages)
    placed = 0
    if free > 0 and out:
        marked = _mark_message(copy.deepcopy(out[-1]))
        if marked is not None:
            out[-1], placed = marked, placed + 1
    sent_system: str | list[dict[str, Any]] | None = system
    if free - placed <= 0:
        pass
    elif summary_ack_index is not None:
        if summary_ack_index < len(out) - 1:  # the newest message's marker covers it already
            marked = _mark_message(copy.deepcopy(out[summary_ack_index]))
            if marked is not None:
                out[summary_ack_index], placed = marked, placed + 1
    elif system:
        sent_system, placed = [{"type": "text", "text": system, **_marker()}], placed + 1
    return sent_system, out, placed


def prefix_chain(
    system: str | None, messages: Sequence[dict[str, Any]], tools: Sequence[Any] | None
) -> list[str]:
    """Chained fingerprints: [tools + system, then one per message]; markers are ignored."""
    digest = hashlib.sha256(_canonical([tools or [], system or ""]).encode())
    chain = [digest.hexdigest()[:CHAIN_HEX]]
    for message in messages:
        digest.update(_canonical(message).encode())
        chain.append(digest.copy().hexdigest()[:CHAIN_HEX])
    return chain


def _canonical(value: Any) -> str:
    text = _CANONICAL.encode(value)
    # Without the name anywhere there is no marker to leave out (the usual case: one pass).
    return text if "cache_control" not in text else _CANONICAL.encode(unmarked(value))


def unmarked(value: Any) -> Any:
    """`value` without its `cache_control` keys (they change nothing a provider caches)."""
    if isinstance(value, dict):
        return {k: unmarked(v) for k, v in value.items() if k != "cache_control"}
    if isinstance(value, list):
        return [unmarked(v) for v in value]
    return value


def cumulative_tokens(head: int, sources: Sequence[str], tokens: dict[str, int]) -> list[int]:
    """Tokens up to each chain element: `head` for tools + system, then per output message
    the tokens of its source (a source rendered as several messages counts once)."""
    totals, running, seen = [head], head, set()
    for source in sources:
        running += tokens.get(source, 0) if source not in seen else 0
        seen.add(source)
        totals.append(running)
    return totals


def shared_length(previous: Sequence[str], current: Sequence[str]) -> int:
    """How many leading chain elements two contexts share."""
    shared = 0
    for old, new in zip(previous, current, strict=False):
        if old != new:
            break
        shared += 1
    return shared
