"""What each served context shares with the previous one (`usage.cache`), and the record kept
per session and model to know it.

The record lives in `sessions.last_context[model]` next to the estimate calibration reads:
the prefix chain of the context (app/engine/prompt_cache.py), the summary version it was served at
with the prune anchor of that version, a fingerprint of the settings, the estimate limit and
how many messages were pruned, and the session's `last_seq` it was assembled at. Comparing
two records tells what broke the cache, checked in
this order: `settings` (format, settings keys, system prompt or tools changed), `budget`
(budget or calibration changed), `clear` / `fold` (a new summary version), `prune` (more
messages pruned), and `budget` for anything else (a fitted, dropped or truncated context).
Hashing the sent messages is linear in the context and costs well under a millisecond for a
hundred messages, so it runs on every request.

A record is written only when its *shape* changes (`extends`): between two folds an
append-only session serves contexts that only extend the recorded one, and a read that
changed nothing but appends writes nothing (SPEC §12). The newest record a replica served
is kept in its memory (`PromptRecords`), so `usage.cache` and `POST …/usage` on that replica
compare with the context really served last; another replica compares with the recorded one,
an earlier context of the same shape (its shared prefix, never more).
"""

from __future__ import annotations

import hashlib
import json
from collections import OrderedDict
from collections.abc import Mapping, Sequence
from typing import Any

from app.core.context_settings import ContextSettings
from app.engine.assemble import AssemblyResult
from app.engine.budget import estimate_limit
from app.engine.prompt_cache import CacheReason, shared_length
from app.schemas.context import CacheUsage


def settings_fingerprint(
    fmt: str,
    settings: ContextSettings,
    system_prompt: str | None,
    tools: Sequence[Mapping[str, Any]] | None,
) -> str:
    """Everything but the budget and the history that shapes a context (the summarizer
    strategy and model do not)."""
    described = json.dumps(
        [fmt, settings.model_dump(exclude={"strategy", "summarizer"}), system_prompt, tools],
        sort_keys=True,
        default=str,
    )
    return hashlib.sha256(described.encode()).hexdigest()[:16]


# The fields that must match for one context to extend another (besides the chain).
SHAPE = ("version", "anchor", "settings", "limit", "pruned")


def served_record(
    result: AssemblyResult,
    *,
    version: int,
    anchor: int | None,
    fingerprint: str,
    ratio: float,
    through_seq: int,
) -> dict[str, Any]:
    """The `last_context[model]` value for a served context."""
    return {
        "estimated": result.usage.estimated_tokens,
        "version": version,
        "anchor": anchor,
        "settings": fingerprint,
        "limit": estimate_limit(result.usage.budget, ratio),
        "pruned": len(result.pruned),
        "chain": list(result.prefix_chain),
        "through_seq": through_seq,
    }


def extends(base: Any, record: Mapping[str, Any]) -> bool:
    """Whether `record` is `base` plus appended messages: the same shape, `base`'s chain a
    prefix of `record`'s, and not older. Such a record need not be written (module docstring)."""
    if not isinstance(base, Mapping) or not isinstance(base.get("chain"), list):
        return False
    if any(base.get(key) != record[key] for key in SHAPE):
        return False
    old, new = base["chain"], record["chain"]
    through = base.get("through_seq")
    return (
        isinstance(through, int)
        and through <= record["through_seq"]
        and len(old) <= len(new)
        and new[: len(old)] == old
    )


# What one remembered record keeps alive: the dict, its key, and ~90 bytes a chain item.
RECORD_OVERHEAD, CHAIN_ITEM_BYTES = 1_000, 90


class PromptRecords:
    """The record of the context last served per (tenant, session pk, model) on this replica,
    least recently used out past `max_bytes` (16 MiB: thousands of active sessions)."""

    def __init__(self, max_bytes: int = 16 << 20) -> None:
        self.max_bytes = max_bytes
        self.size = 0
        self._records: OrderedDict[tuple[str, int, str], tuple[dict[str, Any], int]] = OrderedDict()

    def previous(self, key: tuple[str, int, str], recorded: Any) -> Any:
        """The record to compare with: ours when it extends the recorded one, else that."""
        found = self._records.get(key)
        mine = found[0] if found is not None else None
        return mine if mine is not None and extends(recorded, mine) else recorded

    def remember(self, key: tuple[str, int, str], record: dict[str, Any]) -> None:
        self.forget(key)
        size = RECORD_OVERHEAD + CHAIN_ITEM_BYTES * len(record["chain"])
        self._records[key] = (record, size)
        self.size += size
        while self.size > self.max_bytes:
            self.size -= self._records.popitem(last=False)[1][1]

    def forget(self, key: tuple[str, int, str]) -> None:
        found = self._records.pop(key, None)
        if found is not None:
            self.size -= found[1]


def previous_anchor(previous: Any, version: int) -> int | None:
    """The prune anchor of summary `version`, if a context was served at that version."""
    if isinstance(previous, Mapping) and previous.get("version") == version:
        anchor = previous.get("anchor")
        return anchor if isinstance(anchor, int) else None
    return None


def compare(
    previous: Any, record: Mapping[str, Any], result: AssemblyResult, summary_method: str | None
) -> CacheUsage:
    """`usage.cache` for `result`, given the record of the previous context served."""
    if not isinstance(previous, Mapping) or not isinstance(previous.get("chain"), list):
        return CacheUsage(prefix_tokens=0, reason="first", breakpoints=result.breakpoints)
    old_chain = [str(item) for item in previous["chain"]]
    shared = shared_length(old_chain, result.prefix_chain)
    tokens = result.prefix_tokens[shared - 1] if shared else 0
    reason: CacheReason
    if shared == len(old_chain):
        reason = "none"
    elif previous.get("settings") != record["settings"]:
        reason = "settings"
    elif previous.get("limit") != record["limit"]:
        reason = "budget"
    elif previous.get("version") != record["version"]:
        reason = "clear" if summary_method == "clear" else "fold"
    elif record["pruned"] > int(previous.get("pruned") or 0):
        reason = "prune"
    else:
        reason = "budget"
    return CacheUsage(prefix_tokens=tokens, reason=reason, breakpoints=result.breakpoints)
