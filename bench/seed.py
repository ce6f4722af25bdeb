"""Seed big, already-folded sessions straight into the database, in bulk (not over HTTP).

A pool of 500 distinct turns (tests/transcripts.py) is normalized and counted once exactly
as the append path does, and serialized once with SQLAlchemy's bind processors for the
dialect. A session of N messages cycles through the pool (each row its own id, seq and call
id) and goes in through the driver's bulk path in chunks: `executemany` on SQLite, binary
`COPY` on PostgreSQL. A summary then covers all but the newest `TAIL_MESSAGES` (whole turns),
as after a real fold, with its summaries-history row.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable, Iterator
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
from tests.transcripts import agent_session, summary_text

MODEL = "claude-sonnet-4-5"
SYSTEM_PROMPT = "You are a careful coding agent. Keep answers short and cite file paths."
TURN_LENGTH = 4  # agent_session(steps=1): request, call, result, report
# 10 turns stay verbatim after the fold (~6k tokens, well under the default budget), so
# reading the context never folds again and every request measures the same work.
TAIL_MESSAGES = 10 * TURN_LENGTH
POOL_TURNS = 500
CHUNK = 20_000
MESSAGES = Message.__table__
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


def _ids(count: int, seed: int) -> list[str]:
    """`count` random version-4 UUID strings (uuid.uuid4() costs ~2 µs each)."""
    rng = random.Random(seed)
    ids = []
    for _ in range(count):
        h = f"{rng.getrandbits(128):032x}"
        ids.append(f"{h[:8]}-{h[8:12]}-4{h[13:16]}-{'89ab'[int(h[16], 16) & 3]}{h[17:20]}-{h[20:]}")
    return ids


def _chunks(
    pool: list[dict[str, Any]], session_pk: int, count: int
) -> Iterator[tuple[list[tuple[Any, ...]], list[str]]]:
    """Rows in COLUMNS order for seq 1..count, CHUNK at a time, with their ids."""
    id_at, session_at, seq_at, content_at = (
        COLUMNS.index(name) for name in ("id", "session_id", "seq", "content")
    )
    templates = [[row.get(name) for name in COLUMNS] for row in pool]
    with_call = [isinstance(row["content"], str) and "toolu_" in row["content"] for row in pool]
    for start in range(0, count, CHUNK):
        ids = _ids(min(CHUNK, count - start), seed=session_pk * 1_000_003 + start)
        records = []
        for offset, row_id in enumerate(ids):
            index = start + offset
            at = index % len(pool)
            values = templates[at].copy()
            values[id_at], values[session_at], values[seq_at] = row_id, session_pk, index + 1
            turn, pool_turn = index // TURN_LENGTH, at // TURN_LENGTH
            if with_call[at] and turn != pool_turn:  # call ids have a fixed width
                values[content_at] = values[content_at].replace(
                    f"toolu_{pool_turn:08d}", f"toolu_{turn:08d}"
                )
            records.append(tuple(values))
        yield records, ids


async def _insert(connection: AsyncConnection, records: list[tuple[Any, ...]]) -> None:
    driver: Any = (await connection.get_raw_connection()).driver_connection
    if connection.dialect.name == "postgresql":
        await driver.copy_records_to_table(MESSAGES.name, records=records, columns=COLUMNS)
        return
    names = ", ".join(f'"{name}"' for name in COLUMNS)
    marks = ", ".join("?" for _ in COLUMNS)
    await driver.executemany(f"INSERT INTO {MESSAGES.name} ({names}) VALUES ({marks})", records)


async def seed_folded_session(database_url: str, session_id: str, count: int) -> SeededSession:
    """Store a session of `count` messages whose summary covers all but the last turns."""
    if count % TURN_LENGTH or count <= TAIL_MESSAGES:
        raise ValueError(f"count must be a multiple of {TURN_LENGTH} above {TAIL_MESSAGES}")
    started = time.perf_counter()
    counter = bench_counter()
    summary = summary_text()
    summary_tokens = counter.count_text(summary)
    through_seq = count - TAIL_MESSAGES
    pool_raw = agent_session(min(count, POOL_TURNS * TURN_LENGTH))
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
            through_id = ""
            for records, ids in _chunks(pool, session_pk, count):
                await _insert(connection, records)
                first_seq = records[0][COLUMNS.index("seq")]
                if first_seq <= through_seq < first_seq + len(ids):
                    through_id = ids[through_seq - first_seq]
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
