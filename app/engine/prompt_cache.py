"""Prompt caching: Anthropic `cache_control` breakpoints, and the prefix a context shares with
the previous one.

Providers bill a cached prefix at about a tenth of the input price, and only when a request
starts with exactly a prefix they have seen (Anthropic: in the order tools, system, messages, up
to a `cache_control` breakpoint that ended a prefix sent before; OpenAI: automatically). The
system is sent as two text blocks, the system prompt and the summary section, so a fold (a new
summary) leaves tools + system prompt readable from the cache. Breakpoints, in priority order:

1. the newest message: the whole request, read back next turn;
2. the end of the summary (its system block, or the summary pair's answer): what a prune event
   or a turn too long for the provider's look-back still reads;
3. the end of the system prompt: what a fold still reads (tools + system prompt).

The Messages API accepts at most MAX_BREAKPOINTS per request, markers the client stored in its
messages or tools included (app/engine/markers.py; the oldest of those are dropped beyond the
limit before we place any), so ours are placed in that order while that many are free, never
over a client's marker. With no marker in it the system is sent as one string, the parts
joined.

`prefix_chain` fingerprints a rendered context element by element: tools + system prompt, the
summary section when the summary is in the system, then each message (openai: each message
after the system message, whose parts are those first two elements), markers left out. Two
contexts share a prefix of k elements when their first k chain values are equal, which the
service compares with the previous context it served.
"""

from __future__ import annotations

import copy
import hashlib
import json
from collections.abc import Sequence
from itertools import accumulate
from typing import Any, Literal

from app.engine import markers
from app.engine.markers import UNMARKABLE
from app.engine.render import SystemParts

MAX_BREAKPOINTS = markers.MAX_MARKERS
# Why the context served before is not a prefix of this one (`usage.cache.reason`): none (it
# is), first (nothing served before), or what changed.
CacheReason = Literal["none", "first", "fold", "clear", "prune", "budget", "settings"]
CACHE_CONTROL: dict[str, str] = {"type": "ephemeral"}
# 16 hex digits of SHA-256 per element: collisions are out of reach for one session.
CHAIN_HEX = 16
# json.dumps(sort_keys=True, ensure_ascii=False, default=str), its encoder built once.
_CANONICAL = json.JSONEncoder(sort_keys=True, ensure_ascii=False, default=str)


def _mark_message(message: dict[str, Any]) -> dict[str, Any] | None:
    """A copy of `message` with a marker on its last markable block, or None if it has none
    or the client's marker is already there (it is kept as the client set it)."""
    content = message.get("content")
    if isinstance(content, str):
        return {**message, "content": [{"type": "text", "text": content, **_marker()}]}
    if not isinstance(content, list):
        return None
    for index in range(len(content) - 1, -1, -1):
        block = content[index]
        if isinstance(block, dict) and block.get("type") not in UNMARKABLE:
            if "cache_control" in block:
                return None
            marked = list(content)
            marked[index] = {**block, **_marker()}
            return {**message, "content": marked}
    return None


def _marker() -> dict[str, Any]:
    return {"cache_control": dict(CACHE_CONTROL)}


SystemPart = Literal["prompt", "summary"]


def place_breakpoints(
    system: SystemParts,
    messages: list[dict[str, Any]],
    tools: list[dict[str, Any]] | None,
    *,
    summary_ack_index: int | None,
) -> tuple[str | list[dict[str, Any]] | None, list[dict[str, Any]], int]:
    """(system, messages, markers placed): breakpoints in the module's priority order within
    the provider's limit; the system as text blocks when one of them is marked, else the joined
    string. Inputs are not modified."""
    free = MAX_BREAKPOINTS - markers.count(messages, tools)
    targets: list[int | SystemPart] = [len(messages) - 1] if messages else []
    if summary_ack_index is not None:
        targets.append(summary_ack_index)
    elif system.summary:
        targets.append("summary")
    if system.prompt:
        targets.append("prompt")
    out, marked_parts, placed = list(messages), set[SystemPart](), 0
    for target in dict.fromkeys(targets):  # the summary's answer may be the newest message
        if placed >= free:
            break
        if isinstance(target, str):
            marked_parts.add(target)
            placed += 1
        elif (marked := _mark_message(copy.deepcopy(out[target]))) is not None:
            out[target], placed = marked, placed + 1
    return _system_blocks(system, marked_parts), out, placed


def _system_blocks(
    system: SystemParts, marked: set[SystemPart]
) -> str | list[dict[str, Any]] | None:
    if not marked:
        return system.text
    parts: tuple[tuple[SystemPart, str | None], ...] = (
        ("prompt", system.prompt),
        ("summary", system.summary),
    )
    return [
        {"type": "text", "text": text, **(_marker() if name in marked else {})}
        for name, text in parts
        if text
    ]


def prefix_chain(
    fmt: str, system: SystemParts, messages: Sequence[dict[str, Any]], tools: Sequence[Any] | None
) -> list[str]:
    """Chained fingerprints: [tools + system prompt, the summary section if any, then one per
    message]; markers are ignored. The format is in the first element: no provider reads
    another format's cache, even where plain messages look the same."""
    digest = hashlib.sha256(_canonical([fmt, tools or [], system.prompt or ""]).encode())
    chain = [digest.hexdigest()[:CHAIN_HEX]]
    for element in ([system.summary] if system.summary else []) + list(messages):
        digest.update(_canonical(element).encode())
        chain.append(digest.copy().hexdigest()[:CHAIN_HEX])
    return chain


# Chain elements a context has besides its messages': tools + system prompt, the summary (a
# system section, or a pair of messages), a continuation message before a history that starts
# with an answer.
CHAIN_HEAD = 4


def chain_elements(content: Any, tool_calls: Any) -> int:
    """The most chain elements one stored message renders to, in any format: an output
    message or item per block and per tool call (openai: a `tool` message per result;
    openai_responses: an item per call, result, reasoning or run of text), plus one."""
    blocks = 0 if isinstance(content, str) else len(content or ())
    return 1 + blocks + len(tool_calls or ())


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


def cumulative_tokens(
    head: Sequence[int], sources: Sequence[str], tokens: dict[str, int]
) -> list[int]:
    """Tokens up to each chain element: `head` per element before the messages (tools +
    system prompt, the summary section), then per output message the tokens of its source (a
    source rendered as several messages counts once)."""
    totals = list(accumulate(head))
    running, seen = totals[-1], set()
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
