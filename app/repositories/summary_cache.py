"""The shared summary cache on the `summary_cache` table (the `SummaryCache` protocol).

It opens its own short session per call instead of joining a request's unit of work: a cache
write must survive even if the surrounding request rolls back, and it must not hold a
connection while an LLM call runs. Concurrent writers of the same key are harmless: the insert
ignores a conflict (ON CONFLICT DO NOTHING on SQLite and PostgreSQL alike).
"""

from __future__ import annotations

from sqlalchemy import select
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from app.models import SummaryCacheEntry
from app.summarizers.base import Method, ModelUsage, SummaryResult


class DbSummaryCache:
    def __init__(self, session_factory: async_sessionmaker[AsyncSession]) -> None:
        self.session_factory = session_factory

    async def get(self, key: str) -> SummaryResult | None:
        async with self.session_factory() as session:
            row = await session.scalar(
                select(SummaryCacheEntry).where(SummaryCacheEntry.key == key)
            )
        if row is None:
            return None
        method: Method = "hybrid" if row.method == "hybrid" else "llm"
        return SummaryResult(
            text=row.text,
            tokens=row.tokens,
            method=method,
            model=row.model,
            usage=ModelUsage(input_tokens=row.tokens_in, output_tokens=row.tokens_out),
        )

    async def put(self, key: str, result: SummaryResult) -> None:
        values = {
            "key": key,
            "text": result.text,
            "tokens": result.tokens,
            "method": result.method,
            "model": result.model,
            "tokens_in": result.tokens_in,
            "tokens_out": result.tokens_out,
        }
        async with self.session_factory() as session:
            dialect = session.get_bind().dialect.name
            insert = postgresql.insert if dialect == "postgresql" else sqlite.insert
            statement = insert(SummaryCacheEntry).values(**values).on_conflict_do_nothing()
            await session.execute(statement)
            await session.commit()
