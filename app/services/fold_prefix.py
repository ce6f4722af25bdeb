"""Fold on the cached prefix (SPEC §13): the context just served, for the fold to repeat.

A fold that repeats the last served context byte for byte and asks for the summary as one
more user turn is billed at the provider's cache-read price for all of it, where a fresh
prompt pays full price for every token it reads. That holds only when the model has seen the
span as it is folded, and the provider has cached it:

- the context is served in a provider's format (not `raw`);
- it extends the context this session last served for the model (same shape, that one's
  messages a prefix of this one's), and that one already held the span: a posted transcript
  never served, a first read, a changed setting, or a cut (budget, prune) is not in the
  provider's cache yet;
- every message of the span is sent whole (none pruned).

Otherwise the fold uses a fresh prompt, and `prefix_note` says why.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from app.engine.assemble import AssemblyResult
from app.services.folds import FoldJob
from app.services.prompt_cache import extends
from app.summarizers.base import CachedPrefix
from app.summarizers.prompts import span_end

PROVIDER_FORMATS = ("anthropic", "openai", "openai_responses", "gemini")


def with_prefix(
    job: FoldJob,
    served: AssemblyResult,
    *,
    fmt: str,
    model: str,
    previous: Any,
    record: Mapping[str, Any],
) -> FoldJob:
    """`job` with the prefix it may fold on (`served`, the context this request serves, whose
    record is `record`; `previous`, the record of the one served before), or the reason why
    none."""
    if fmt not in PROVIDER_FORMATS:
        return replace(job, prefix_note=f"the context is served as {fmt}, not a provider's format")
    note = _unseen(job, served, previous, record)
    if note is not None:
        return replace(job, prefix_note=note)
    last = job.messages[-1]
    at = max(i for i, source in enumerate(served.sources) if source == last.id)
    prefix = CachedPrefix(
        format=fmt,
        model=model,
        system=served.system,
        messages=served.messages,
        tools=served.tools,
        keep_last=len(served.messages) - 1 - at,
        span_end=span_end(last),
    )
    return replace(job, prefix=prefix)


def _unseen(
    job: FoldJob, served: AssemblyResult, previous: Any, record: Mapping[str, Any]
) -> str | None:
    """Why the provider has not cached the span as the model saw it, or None."""
    if not extends(previous, record) or previous.get("through_seq", 0) < job.through_seq:
        return "the span was not in the context served before (not in the provider's cache)"
    span = {m.id for m in job.messages}
    if span & set(served.pruned):
        return "part of the span was sent pruned"
    if not span <= set(served.sources):
        return "part of the span was not sent"
    return None
