"""Seed big, already-folded sessions straight into the database, in seconds.

Going through the API costs 100 HTTP round trips and ~100k token counts per 100k
messages; the read benchmark needs the stored state, not the path that wrote it. So:

1. A pool of `POOL_TURNS` distinct turns is generated once, normalized and counted exactly
   as `MessageService.append` does (same `normalize_message`, same counter,
   `count_message`), and serialized once with SQLAlchemy's own bind processors
   for the target dialect (so JSON and timestamps are stored the way the app stores them).
2. A session of N messages cycles through the pool: each row gets a fresh id, its seq, and
   its own tool-call id (the counter does not count call ids, so the stored count stays exact).
3. Rows go in through the driver's bulk path inside the app's engine and transaction —
   `executemany` on SQLite, binary `COPY` on PostgreSQL — which is ~20× faster than ORM
   inserts (measured: 100k ORM rows took ~50 s on SQLite; this path takes ~2 s).

The session then looks as if it had been folded once: a summary covers everything but the
newest `TAIL_MESSAGES` (whole turns, so no tool call is separated from its result), with
its summaries-history row.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from sqlalchemy import Dialect, insert, update
from sqlalchemy.ext.asyncio import AsyncConnection

from app.core.db import create_engine
from app.core.security import OPEN_TENANT
from app.core.settings import Settings
from app.engine.shapes import normalize_message
from app.models import Message, Session, Summary
from app.models.base import utcnow
from app.tokens.counter import TiktokenCounter, counter_for
from app.tokens.registry import load_registry
from bench.conversation import TURN_LENGTH, summary_text, transcript

MODEL = "claude-sonnet-4-5"
SYSTEM_PROMPT = "You are a careful coding agent. Keep answers short and cite file paths."
# 10 turns stay verbatim after the fold: ~4.5k tokens, well under the default budget, so
# reading the context never folds again and every request measures the same work.
TAIL_MESSAGES = 10 * TURN_LENGTH
# 500 distinct turns (2,000 messages): the newest 10 turns never repeat a call id or text.
POOL_TURNS = 500
INSERT_BATCH = 10_000
MESSAGES = Message.__table__
MESSAGES_TABLE = Message.__tablename__
COLUMNS = [column.name for column in MESSAGES.columns]


@dataclass(frozen=True, slots=True)
class SeededSession:
    session_id: str
    messages: int
    through_seq: int
    seconds: float


def bench_counter() -> TiktokenCounter:
    return counter_for(load_registry(Settings()).get(MODEL))


def counted_rows(raw: list[dict[str, Any]], counter: TiktokenCounter) -> list[dict[str, Any]]:
    """Column values for `raw`, normalized and counted as the append path does (no ids yet)."""
    now = utcnow()
    rows = []
    for index, item in enumerate(raw):
        message = normalize_message(item, index)
        tool_calls = [dict(call) for call in message.tool_calls] if message.tool_calls else None
        rows.append(
            {
                "role": message.role,
                "content": message.content,
                "name": message.name,
                "tool_calls": tool_calls,
                "tool_call_id": message.tool_call_id,
                "metadata": dict(message.metadata or {}),
                "token_count": counter.count_message(message),
                "client_id": None,
                "created_at": now,
            }
        )
    return rows


def _bind(rows: list[dict[str, Any]], dialect: Dialect) -> list[dict[str, Any]]:
    """Serialize every value once with the column type's own bind processor."""
    processors: dict[str, Callable[[Any], Any] | None] = {
        column.name: column.type.dialect_impl(dialect).bind_processor(dialect)
        for column in MESSAGES.columns
    }
    bound = []
    for row in rows:
        out = {}
        for name, value in row.items():
            processor = processors[name]
            out[name] = processor(value) if processor is not None and value is not None else value
        bound.append(out)
    return bound


def _call_id(turn: int) -> str:
    # Same length for every turn, so substituting one for another is a plain replace.
    return f"toolu_{turn:08d}"


def _fast_ids(count: int, seed: int) -> list[str]:
    """`count` random version-4 UUID strings (uuid.uuid4() costs ~2 µs each: 0.2 s per 100k)."""
    rng = random.Random(seed)
    ids = []
    for _ in range(count):
        h = f"{rng.getrandbits(128):032x}"
        ids.append(f"{h[:8]}-{h[8:12]}-4{h[13:16]}-{'89ab'[int(h[16], 16) & 3]}{h[17:20]}-{h[20:]}")
    return ids


def _records(
    pool: list[dict[str, Any]], session_pk: int, count: int
) -> tuple[list[tuple[Any, ...]], list[str]]:
    """Rows in COLUMNS order for seq 1..count; also returns their ids."""
    id_at, session_at, seq_at = (COLUMNS.index(name) for name in ("id", "session_id", "seq"))
    content_at = COLUMNS.index("content")
    templates: list[list[Any]] = [[row.get(name) for name in COLUMNS] for row in pool]
    # Only tool_use / tool_result bodies carry a call id; the others are copied as they are.
    with_call = [isinstance(row["content"], str) and "toolu_" in row["content"] for row in pool]
    ids = _fast_ids(count, seed=session_pk)
    records: list[tuple[Any, ...]] = []
    pool_size = len(pool)
    for index in range(count):
        at = index % pool_size
        values = templates[at].copy()
        values[id_at], values[session_at], values[seq_at] = ids[index], session_pk, index + 1
        turn, pool_turn = index // TURN_LENGTH, at // TURN_LENGTH
        if with_call[at] and turn != pool_turn:
            values[content_at] = values[content_at].replace(_call_id(pool_turn), _call_id(turn))
        records.append(tuple(values))
    return records, ids


async def _bulk_insert(connection: AsyncConnection, records: list[tuple[Any, ...]]) -> None:
    raw = await connection.get_raw_connection()
    driver: Any = raw.driver_connection
    if connection.dialect.name == "postgresql":
        await driver.copy_records_to_table(MESSAGES_TABLE, records=records, columns=COLUMNS)
        return
    placeholders = ", ".join("?" for _ in COLUMNS)
    names = ", ".join(f'"{name}"' for name in COLUMNS)
    sql = f"INSERT INTO {MESSAGES_TABLE} ({names}) VALUES ({placeholders})"
    for start in range(0, len(records), INSERT_BATCH):
        await driver.executemany(sql, records[start : start + INSERT_BATCH])


async def seed_folded_session(database_url: str, session_id: str, count: int) -> SeededSession:
    """Store a session of `count` messages whose summary covers all but the last turns."""
    if count % TURN_LENGTH or count <= TAIL_MESSAGES:
        raise ValueError(f"count must be a multiple of {TURN_LENGTH} above {TAIL_MESSAGES}")
    started = time.perf_counter()
    counter = bench_counter()
    summary = summary_text()
    summary_tokens = counter.count_text(summary)
    through_seq = count - TAIL_MESSAGES
    pool_raw = transcript(min(count, POOL_TURNS * TURN_LENGTH))
    engine = create_engine(database_url)
    try:
        async with engine.begin() as connection:
            pool = _bind(counted_rows(pool_raw, counter), connection.dialect)
            session_pk = (
                await connection.execute(
                    insert(Session)
                    .values(
                        tenant=OPEN_TENANT,
                        external_id=session_id,
                        model=MODEL,
                        system_prompt=SYSTEM_PROMPT,
                        last_seq=count,
                    )
                    .returning(Session.pk)
                )
            ).scalar_one()
            records, ids = _records(pool, session_pk, count)
            await _bulk_insert(connection, records)
            through_id = ids[through_seq - 1]
            # The pinned first message is never folded: the summary covers seq 2..through.
            covered = through_seq - 1
            await connection.execute(
                update(Session)
                .where(Session.pk == session_pk)
                .values(
                    conversation_summary=summary,
                    summary_through_id=through_id,
                    summary_through_seq=through_seq,
                    summary_version=1,
                    summary_message_count=covered,
                    summary_tokens=summary_tokens,
                    summary_method="rule",
                )
            )
            await connection.execute(
                insert(Summary).values(
                    session_id=session_pk,
                    version=1,
                    text=summary,
                    through_id=through_id,
                    through_seq=through_seq,
                    message_count=covered,
                    tokens=summary_tokens,
                    method="rule",
                    stats={"trigger": "bench-seed"},
                )
            )
    finally:
        await engine.dispose()
    return SeededSession(session_id, count, through_seq, time.perf_counter() - started)
