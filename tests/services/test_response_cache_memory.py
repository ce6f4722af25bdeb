"""The response cache holds at most FOLDWISE_CONTEXT_CACHE_BYTES of process memory: each
entry is charged what it keeps alive (body, key, stamp, record, snapshot, bookkeeping), as
measured by tracemalloc with many small entries and with fewer large ones."""

from __future__ import annotations

import gc
import tracemalloc
from datetime import UTC, datetime

import pytest

from app.core.context_settings import ContextSettings
from app.engine.types import Message
from app.repositories.context import SessionVersion
from app.schemas.common import SummaryState
from app.services.context import Snapshot
from app.services.response_cache import Entry, ResponseCache, Stamp

CAP = 4 << 20


def snapshot(index: int, messages: int, words: int) -> Snapshot:
    """A snapshot shaped like a served one: `messages` distinct messages of `words` words."""
    held = tuple(
        Message(
            id=f"{index:08x}-{n:04x}-4000-8000-000000000000",
            seq=n + 1,
            role="user" if n % 2 == 0 else "assistant",
            content=" ".join(f"w{index}x{n}y{w}" for w in range(words)),
            tokens=3 * words + 4,
            metadata={"source": "bench"},
        )
        for n in range(messages)
    )
    version = SessionVersion(index, datetime.now(UTC), messages, 0, 0)
    return Snapshot(
        pk=index,
        external_id=f"session-{index}",
        session_model="claude-sonnet-4-5",
        system_prompt=None,
        tools=None,
        context_settings=ContextSettings(),
        summary=SummaryState(
            text=None,
            version=0,
            through_id=None,
            through_seq=0,
            message_count=0,
            tokens=0,
            method=None,
        ),
        messages_total=messages,
        messages=held,
        calibration=None,
        last_served={},
        version=version,
        removed=0,
        explain=False,
    )


def entry(index: int, messages: int, words: int) -> tuple[tuple[str, str, bytes], Entry]:
    held = snapshot(index, messages, words)
    record = {"version": 0, "chain": [f"{index:08x}{n:08x}" for n in range(messages + 1)]}
    body = b'{"messages": [' + b"x" * (messages * words * 6) + b"]}"
    stamp = Stamp(held.version, None, record)
    key = ("default", held.external_id, f"max_tokens={index}".encode())
    return key, Entry(stamp, "claude-sonnet-4-5", "anthropic", body, held)


@pytest.mark.parametrize(
    ("messages", "words"),
    [(2, 3), (8, 20), (40, 60)],
    ids=["tiny entries", "small entries", "large entries"],
)
def test_process_memory_stays_within_the_cap(messages: int, words: int) -> None:
    cache = ResponseCache(CAP)
    gc.collect()
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        index = 0
        while index < 30_000 and cache.evicted < 2 * max(1, len(cache)):  # filled twice over
            key, value = entry(index, messages, words)
            cache.put(key, value, sum(len(part) for part in key))
            index += 1
        gc.collect()
        held = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
    assert cache.size <= CAP
    assert len(cache) > 10  # the cache is in use, not trivially empty
    assert held <= CAP * 1.05, f"{held / CAP:.2f} of the cap for {len(cache)} entries"
