"""A session of 50,000 messages for the Inspector's browser tests, written in a few seconds:
created through the API, then its messages and one summary version inserted through the
models in bulk (what the append and fold paths store, without counting them one request at a
time), on SQLite and PostgreSQL alike."""

from __future__ import annotations

import asyncio
from typing import Any

import httpx
from sqlalchemy import insert, select, update

from app.core.db import create_engine
from app.engine.types import Message as EngineMessage
from app.models import Message, Session, Summary
from app.models.message import new_id
from app.tokens.counter import counter_for
from app.tokens.registry import load_registry
from tests.support.apps import make_settings

MODEL = "claude-sonnet-4-5"
# Messages the summary does not cover: the newest ones, sent verbatim.
LIVE = 10
BATCH = 5_000


def _message(seq: int) -> dict[str, Any]:
    role = "user" if seq % 2 else "assistant"
    return {"id": new_id(), "seq": seq, "role": role, "content": f"turn {seq}: " + "step " * 8}


async def _insert(database_url: str, session_id: str, count: int) -> None:
    counter = counter_for(load_registry(make_settings(database_url)).get(MODEL))
    rows = [_message(seq) for seq in range(1, count + 1)]
    for row in rows:
        row["token_count"] = counter.count_message(
            EngineMessage(
                id=row["id"], seq=row["seq"], role=row["role"], content=row["content"], tokens=0
            )
        )
    through = rows[count - LIVE - 1]
    text = f"Summary of the first {through['seq']:,} generated turns: each one is a numbered step."
    engine = create_engine(database_url)
    try:
        async with engine.begin() as connection:
            pk = (
                await connection.execute(
                    select(Session.pk).where(Session.external_id == session_id)
                )
            ).scalar_one()
            for start in range(0, count, BATCH):
                batch = rows[start : start + BATCH]
                await connection.execute(insert(Message), [{"session_id": pk, **r} for r in batch])
            summary = {
                "text": text,
                "through_id": through["id"],
                "through_seq": through["seq"],
                "message_count": through["seq"],
                "tokens": counter.count_text(text),
                "method": "rule",
            }
            await connection.execute(
                update(Session)
                .where(Session.pk == pk)
                .values(
                    last_seq=count,
                    live_tokens=sum(r["token_count"] for r in rows),
                    conversation_summary=text,
                    summary_through_id=through["id"],
                    summary_through_seq=through["seq"],
                    summary_version=1,
                    summary_message_count=through["seq"],
                    summary_tokens=summary["tokens"],
                    summary_method="rule",
                )
            )
            await connection.execute(
                insert(Summary).values(
                    session_id=pk, version=1, stats={"trigger": "manual"}, **summary
                )
            )
    finally:
        await engine.dispose()


def seed_long_session(
    base_url: str, key: str, database_url: str, session_id: str, count: int
) -> None:
    """`count` messages, all but the newest LIVE covered by summary v1."""
    with httpx.Client(base_url=base_url, headers={"Authorization": f"Bearer {key}"}) as client:
        client.post("/sessions", json={"id": session_id, "model": MODEL}).raise_for_status()
    asyncio.run(_insert(database_url, session_id, count))
