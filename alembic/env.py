"""Alembic environment: async engine, URL from the caller or FOLDWISE_DATABASE_URL.

Runs the migration functions through `connection.run_sync` on the same async driver the
service uses, so `sqlite:///…` and `postgresql://…` URLs work unchanged.
"""

from __future__ import annotations

import asyncio
from logging.config import fileConfig

from sqlalchemy.engine import Connection

from alembic import context
from app.core.db import create_engine
from app.core.settings import Settings
from app.models import Base

config = context.config
# Arbitrary constant naming Foldwise's migration lock among PostgreSQL advisory locks.
MIGRATION_LOCK_KEY = 7_316_045_219
target_metadata = Base.metadata

# Programmatic callers (foldwise serve/migrate, tests) configure logging themselves.
if config.config_file_name is not None and not config.attributes.get("database_url"):
    fileConfig(config.config_file_name, disable_existing_loggers=False)


def _database_url() -> str:
    url = config.attributes.get("database_url")
    return str(url) if url else Settings().database_url


def _configure(connection: Connection) -> None:
    context.configure(
        connection=connection,
        target_metadata=target_metadata,
        compare_type=True,
        # SQLite cannot ALTER most things: batch mode recreates tables when needed.
        render_as_batch=connection.dialect.name == "sqlite",
    )
    with context.begin_transaction():
        if connection.dialect.name == "postgresql":
            # Replicas starting together: one migrates, the others wait here and then find
            # nothing left to do (the lock ends with the transaction).
            connection.exec_driver_sql(f"SELECT pg_advisory_xact_lock({MIGRATION_LOCK_KEY})")
        context.run_migrations()


async def _run_online() -> None:
    engine = create_engine(_database_url())
    try:
        async with engine.connect() as connection:
            await connection.run_sync(_configure)
    finally:
        await engine.dispose()


def run_migrations_offline() -> None:
    from app.core.db import normalize_database_url

    context.configure(
        url=normalize_database_url(_database_url()).render_as_string(hide_password=False),
        target_metadata=target_metadata,
        literal_binds=True,
        dialect_opts={"paramstyle": "named"},
    )
    with context.begin_transaction():
        context.run_migrations()


if context.is_offline_mode():
    run_migrations_offline()
else:
    asyncio.run(_run_online())
