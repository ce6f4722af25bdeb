"""DbSummaryCache on the migrated database (SQLite and PostgreSQL): get, put, conflicting puts."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import pytest
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from app.core.db import create_engine, create_sessionmaker
from app.repositories.summary_cache import DbSummaryCache
from app.summarizers.base import ModelUsage, SummaryResult

RESULT = SummaryResult(
    text="Task: x",
    tokens=3,
    method="llm",
    model="m",
    usage=ModelUsage(input_tokens=10, output_tokens=4),
)


@pytest.fixture
async def session_factory(db_url: str) -> AsyncIterator[async_sessionmaker[AsyncSession]]:
    engine = create_engine(db_url)
    yield create_sessionmaker(engine)
    await engine.dispose()


async def test_miss_then_hit(session_factory) -> None:
    cache = DbSummaryCache(session_factory)
    assert await cache.get("a" * 64) is None
    await cache.put("a" * 64, RESULT)
    assert await cache.get("a" * 64) == RESULT


async def test_concurrent_puts_of_one_key_keep_the_first(session_factory) -> None:
    cache = DbSummaryCache(session_factory)
    other = SummaryResult(text="Task: y", tokens=3, method="hybrid")
    await cache.put("b" * 64, RESULT)
    await asyncio.gather(*(cache.put("b" * 64, other) for _ in range(3)))
    assert await cache.get("b" * 64) == RESULT
