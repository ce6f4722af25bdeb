"""Seed big, already-folded sessions straight into the database, in bulk (not over HTTP).

A pool of 500 distinct turns (tests/support/transcripts.py) is normalized and counted once exactly
as the append path does, and serialized once with SQLAlchemy's bind processors for the
dialect. A session of N messages cycles through the pool (each row its own id, seq and call
id) and goes in through the driver's bulk path in chunks: `executemany` on SQLite, binary
`COPY` on PostgreSQL. A summary then covers all but the newest `TAIL_MESSAGES` (whole turns),
as after a real fold, with its summaries-history row.
"""

from __future__ import annotations

import random
import time
from collections.abc import Iterator
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
from tests.support.transcripts import agent_session, summary_text

MODEL = "claude-sonnet-4-5"
SYSTEM_PROMPT = "You are a careful coding agent. Keep answers short and cite file paths."
TURN_LENGTH = 4  # agent_session(steps=1): request, call, result, report
# 10 turns stay verbatim after the fold (~4k tokens, well under the default budget), so
# reading the context never folds again and every request measures the same work.
TAIL_MESSAGES = 10 * TURN_LENGTH
POOL_TURNS, CHUNK = 500, 20_000
MESSAGES = Message.__table__
COLUMNS = [column.name for column in MESSAGES.columns]
ID, SESSION, SEQ, CONTENT = (COLUMNS.index(c) for c in ("id", "session_id", "seq", "content"))


def _pool(raw: list[dict[str, Any]], counter: TiktokenCounter, dialect: Dialect) -> list[list[Any]]:
    """Rows for `raw` in COLUMNS order, counted as the append path counts them and serialized
    once by each column type's own bind processor (ids, session and seq filled in later)."""
    processors = {c.name: c.type.dialect_impl(dialect).bind_processor(dialect) for c in MESSAGES.c}
    now, rows = utcnow(), []
    for index, item in enumerate(raw):
        message = normalize_message(item, index)
        values = {
            "role": message.role,
            "content": message.content,
            "name": message.name,
            "tool_calls": [dict(c) for c in message.tool_calls] if message.tool_calls else None,
            "tool_call_id": message.tool_call_id,
            "metadata": dict(message.metadata or {}),
            "token_count": counter.count_message(message),
            "created_at": now,
        }
        row = []
        for name in COLUMNS:
            value, bind = values.get(name), processors[name]
            row.append(bind(value) if bind is not None and value is not None else value)
        rows.append(row)
    return rows


def _ids(count: int, seed: int) -> list[str]:
    """`count` random version-4 UUID strings (uuid.uuid4() costs ~2 µs each)."""
    rng = random.Random(seed)
    ids = []
    for _ in range(count):
        h = f"{rng.getrandbits(128):032x}"
        ids.append(f"{h[:8]}-{h[8:12]}-4{h[13:16]}-{'89ab'[int(h[16], 16) & 3]}{h[17:20]}-{h[20:]}")
    return ids


def _chunks(pool: list[list[Any]], session_pk: int, count: int) -> Iterator[list[tuple[Any, ...]]]:
    """Rows for seq 1..count, CHUNK at a time: the pool over and over, each row its own id and
    seq, and tool-call ids (fixed width) renumbered by turn so that no two turns share one."""
    has_call = [isinstance(row[CONTENT], str) and "toolu_" in row[CONTENT] for row in pool]
    for start in range(0, count, CHUNK):
        records = []
        for offset, row_id in enumerate(_ids(min(CHUNK, count - start), session_pk + start)):
            index = start + offset
            at = index % len(pool)
            values = pool[at].copy()
            values[ID], values[SESSION], values[SEQ] = row_id, session_pk, index + 1
            turn, pool_turn = index // TURN_LENGTH, at // TURN_LENGTH
            if has_call[at] and turn != pool_turn:
                old, new = f"toolu_{pool_turn:08d}", f"toolu_{turn:08d}"
                values[CONTENT] = values[CONTENT].replace(old, new)
            records.append(tuple(values))
        yield records


async def _insert(connection: AsyncConnection, records: list[tuple[Any, ...]]) -> None:
    driver: Any = (await connection.get_raw_connection()).driver_connection
    if connection.dialect.name == "postgresql":
        await driver.copy_records_to_table(MESSAGES.name, records=records, columns=COLUMNS)
        return
    names = ", ".join(f'"{name}"' for name in COLUMNS)
    marks = ", ".join("?" for _ in COLUMNS)
    await driver.executemany(f"INSERT INTO {MESSAGES.name} ({names}) VALUES ({marks})", records)


async def seed_folded_session(database_url: str, session_id: str, count: int) -> float:
    """Store a session of `count` messages whose summary covers all but the last turns;
    returns the seconds it took."""
    if count % TURN_LENGTH or count <= TAIL_MESSAGES:
        raise ValueError(f"count must be a multiple of {TURN_LENGTH} above {TAIL_MESSAGES}")
    started = time.perf_counter()
    counter = counter_for(load_registry(Settings()).get(MODEL))
    summary, through_seq = summary_text(), count - TAIL_MESSAGES
    engine = create_engine(database_url)
    try:
        async with engine.begin() as connection:
            raw = agent_session(min(count, POOL_TURNS * TURN_LENGTH))
            pool = _pool(raw, counter, connection.dialect)
            new_session = insert(Session).values(
                tenant=OPEN_TENANT,
                external_id=session_id,
                model=MODEL,
                system_prompt=SYSTEM_PROMPT,
                last_seq=count,
            )
            session_pk = (await connection.execute(new_session.returning(Session.pk))).scalar()
            for records in _chunks(pool, session_pk, count):
                await _insert(connection, records)
                if records[0][SEQ] <= through_seq <= records[-1][SEQ]:
                    through_id = records[through_seq - records[0][SEQ]][ID]
            # The pinned first message is never folded: the summary covers seq 2..through.
            fold = {"through_id": through_id, "through_seq": through_seq, "method": "rule"}
            fold |= {"message_count": through_seq - 1, "tokens": counter.count_text(summary)}
            await connection.execute(
                update(Session)
                .where(Session.pk == session_pk)
                .values(conversation_summary=summary, summary_version=1)
                .values({f"summary_{key}": value for key, value in fold.items()})
            )
            await connection.execute(
                insert(Summary)
                .values(session_id=session_pk, version=1, text=summary, stats={"trigger": "bench"})
                .values(fold)
            )
    finally:
        await engine.dispose()
    return time.perf_counter() - started
