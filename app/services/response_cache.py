"""Response cache: a repeated GET …/context answered from memory after one indexed read.

A context is a pure function of its query, the session row, the messages up to `last_seq`
(immutable once appended), the tenant's calibration for the model family, and the record of
the context served before it for that model (`last_context[model]`, which sets the prune
anchor and `usage.cache`). Each replica keeps the JSON bodies it served, keyed by tenant,
session and query, next to a stamp of that state: the session's `SessionVersion` (pk,
`updated_at`, `last_seq`, `cleared_through_seq`, `summary_version`), the calibration's
(ratio, samples), and the record. The key is (tenant, session id, raw query string): the
same bytes parse to the same options, so a repeat is recognised before anything is parsed
(`lookup`, called by app/api/context_cache.py before routing). It reads the stamp back in
one statement (`context_version`: the `(tenant, external_id)` unique index joined to the
calibration primary key, through the driver itself, app/repositories/context_version.py) and
serves the body only if every part is equal, so an append, a fold, a clear, a PATCH, a
usage report or another query's context made by any replica on the same database is seen
by the next read of every other replica. Nothing is pushed between replicas and nothing
expires by time.

Why a hit needs no write: the cached body is not the response that filled the cache but the
one the *next* identical request computes. That request finds `last_context[model]` equal
to this context's own record (written by the miss, or already there), so it assembles the
same context with the same prune anchor, writes nothing (an unchanged record is never
written), and reports `usage.cache` against itself: `reason: none`, the whole context as the
shared prefix, and `summarized: false`. Those three fields are set on the stored copy; the
stamp includes the record, so a hit is served only while the database still holds it.

Only settled contexts are stored (no fold left to make: the next request would serve the
same context, not fold), and only `summarize=auto|never` without a focus or a history
trigger. Memory is bounded by the bodies' bytes (`FOLDWISE_CONTEXT_CACHE_BYTES`, 0 turns the
cache off; a long query string counts too), least recently used first out. `/metrics`:
`foldwise_context_cache_total` by hit, stale and miss,
`foldwise_context_cache_evictions_total`, `foldwise_context_cache_bytes`.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Hashable
from dataclasses import dataclass, replace
from typing import Any

from app.core.logging import get_logger
from app.core.metrics import CONTEXT_CACHE, CONTEXT_CACHE_BYTES, CONTEXT_CACHE_EVICTIONS
from app.repositories.context import ContextVersion, SessionVersion
from app.repositories.context_version import ContextVersionReader
from app.schemas.context import ContextResponse
from app.services.context import ContextAssembler, ContextOptions, Served, Snapshot
from app.services.context_response import context_response
from app.services.prompt_cache import compare

log = get_logger("foldwise.response_cache")

# A body bigger than this share of the cache would evict most of it for one session.
MAX_ENTRY_SHARE = 0.25
# What an entry holds beyond the bytes of its body and key, charged to the cache so that the
# process memory it takes stays under FOLDWISE_CONTEXT_CACHE_BYTES (measured with tracemalloc:
# tests/services/test_response_cache_memory.py): the key tuple, the Entry, the Stamp and its
# SessionVersion, the LRU node, the snapshot's SummaryState (a pydantic model, ~1.1 KB); each
# prefix-chain fingerprint of the record; each message of the snapshot (the object, its id and
# metadata; its text at ~4 bytes a stored token).
ENTRY_OVERHEAD = 2_600
CHAIN_ITEM_BYTES = 90
MESSAGE_OVERHEAD = 700
TEXT_BYTES_PER_TOKEN = 4


@dataclass(frozen=True, slots=True)
class Stamp:
    """The state a cached body was computed from; equal stamps mean an equal response."""

    version: SessionVersion
    calibration: tuple[float, int] | None
    record: Any


@dataclass(frozen=True, slots=True)
class Entry:
    stamp: Stamp
    model: str
    family: str
    body: bytes
    snapshot: Snapshot | None = None
    """What the body was assembled from: once stale, the base of the next context."""
    size: int = 0  # bytes charged to the cache: body, snapshot and the key's query string


class ResponseCache:
    """LRU of response bodies, bounded by their total size; one per app (per replica)."""

    def __init__(self, max_bytes: int) -> None:
        self.max_bytes = max_bytes
        self.size = 0
        self.hits = 0  # this cache's own counts (`/metrics` sums every cache of the process)
        self.evicted = 0
        self._entries: OrderedDict[Hashable, Entry] = OrderedDict()

    def __len__(self) -> int:
        return len(self._entries)

    def get(self, key: Hashable) -> Entry | None:
        entry = self._entries.get(key)
        if entry is not None:
            self._entries.move_to_end(key)
        return entry

    def put(self, key: Hashable, entry: Entry, key_bytes: int = 0) -> None:
        """Keep `entry`, charged what it holds (`entry_size`; `key_bytes`: the key's strings)."""
        self.discard(key)
        entry = replace(entry, size=entry_size(entry, key_bytes))
        if entry.size > self.max_bytes * MAX_ENTRY_SHARE:
            return
        self._entries[key] = entry
        self._resize(entry.size)
        while self.size > self.max_bytes:
            _, evicted = self._entries.popitem(last=False)
            self._resize(-evicted.size)
            self.evicted += 1
            CONTEXT_CACHE_EVICTIONS.inc()

    def discard(self, key: Hashable) -> None:
        entry = self._entries.pop(key, None)
        if entry is not None:
            self._resize(-entry.size)

    def _resize(self, delta: int) -> None:
        self.size += delta
        CONTEXT_CACHE_BYTES.inc(delta)  # a sum over the caches of this process


def entry_size(entry: Entry, key_bytes: int) -> int:
    """The bytes `entry` keeps alive (see ENTRY_OVERHEAD)."""
    record = entry.stamp.record
    chain = record.get("chain") if isinstance(record, dict) else None
    size = len(entry.body) + key_bytes + ENTRY_OVERHEAD
    size += CHAIN_ITEM_BYTES * len(chain) if isinstance(chain, list) else 0
    if entry.snapshot is not None:
        messages = entry.snapshot.messages
        size += sum(TEXT_BYTES_PER_TOKEN * m.tokens + MESSAGE_OVERHEAD for m in messages)
    return size


def cache_key(
    tenant: str, session_id: str, query: bytes, options: ContextOptions
) -> Hashable | None:
    """The key of a cacheable request, or None (a forced fold, a focus, a history trigger, a
    preview). The raw query string stands for every parameter: the same bytes parse to the
    same options, and a hit is found before anything is parsed (app/api/context_cache.py)."""
    if options.mode == "force" or options.focus or options.trigger or not options.record_served:
        return None
    return (tenant, session_id, query)


def stamp_of(state: ContextVersion, model: str) -> Stamp:
    return Stamp(state.version, state.calibration, state.last_context.get(model))


def served_stamp(served: Served) -> Stamp:
    calibration = served.snapshot.calibration
    ratio = None if calibration is None else (calibration.ratio, calibration.samples)
    return Stamp(served.snapshot.version, ratio, served.stored)


def render(response: ContextResponse) -> bytes:
    """The JSON body, as FastAPI's `response_model_exclude_unset=True` would send it."""
    return response.model_dump_json(exclude_unset=True).encode()


def replayed(response: ContextResponse, served: Served) -> ContextResponse:
    """`response` as the next identical request serves it (see the module docstring)."""
    cache = compare(served.record, served.record, served.result, served.snapshot.summary.method)
    usage = replace(response.usage, cache=cache)
    return response.model_copy(update={"usage": usage, "summarized": False})


async def lookup(
    cache: ResponseCache, versions: ContextVersionReader, tenant: str, session_id: str, query: bytes
) -> bytes | None:
    """The cached body of this request if the database still holds the state it was computed
    from (one indexed read through `versions`); None sends the request down the full path."""
    key = (tenant, session_id, query)
    entry = cache.get(key) if cache.max_bytes else None
    if entry is None:
        CONTEXT_CACHE.labels("miss").inc()
        return None
    try:
        state = await versions.read(tenant, session_id, entry.family)
    except Exception as exc:  # the full path reads again, and answers a 503 if it must
        log.debug("context-version read failed: %r", exc)
        state = None
    if state is None or stamp_of(state, entry.model) != entry.stamp:
        # Kept: its snapshot is the base of the context assembled next (`serve_context`).
        CONTEXT_CACHE.labels("stale").inc()
        return None
    cache.hits += 1
    CONTEXT_CACHE.labels("hit").inc()
    return entry.body


async def serve_context(
    cache: ResponseCache,
    assembler: ContextAssembler,
    session_id: str,
    query: bytes,
    options: ContextOptions,
) -> bytes:
    """The GET …/context body, assembled; kept in `cache` for the next identical request when
    settled (a repeat is answered by `lookup` before it gets here). A stale entry of the same
    request lends its snapshot: after appends only the new messages are read."""
    key = cache_key(assembler.tenant, session_id, query, options) if cache.max_bytes else None
    stale = cache.get(key) if key is not None else None
    served = await assembler.serve(session_id, options, stale.snapshot if stale else None)
    response = context_response(served, options)
    if key is not None:
        if served.settled:
            body = render(replayed(response, served))
            entry = Entry(served_stamp(served), served.model, served.family, body, served.snapshot)
            cache.put(key, entry, len(query) + len(assembler.tenant) + len(session_id))
        else:
            cache.discard(key)
    return render(response)


__all__ = ["Entry", "ResponseCache", "Stamp", "cache_key", "lookup", "serve_context"]
