"""Request dependencies as Annotated aliases: DbSession, ReadDb, Tenant, SettingsDep, …

Everything comes from `app.state` (set by create_app), so a test app with its own
settings never touches process-wide state. Every dependency is `async def`: none blocks,
and FastAPI runs a plain `def` dependency in its threadpool, a thread hop per dependency per
request (~0.15 ms each on the context route).
"""

from __future__ import annotations

import re
from collections.abc import AsyncIterator, Callable, Coroutine
from typing import Annotated, Any, TypeVar, cast

from fastapi import Depends, Request
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from app.core.db import read_scope, session_scope
from app.core.errors import SessionNotFound
from app.core.security import KeyRing, resolve_tenant
from app.core.settings import Settings
from app.schemas.sessions import SESSION_ID_PATTERN
from app.services.context import ContextAssembler
from app.services.folds import SummarizerFactory
from app.services.provider_counts import ProviderCounter
from app.services.read_path import ReadPath
from app.services.response_cache import ResponseCache
from app.tokens.registry import ModelRegistry

_SESSION_ID = re.compile(SESSION_ID_PATTERN)
S = TypeVar("S")


async def get_app_settings(request: Request) -> Settings:
    return cast(Settings, request.app.state.settings)


async def get_registry(request: Request) -> ModelRegistry:
    return cast(ModelRegistry, request.app.state.registry)


async def get_provider_counter(request: Request) -> ProviderCounter:
    return cast(ProviderCounter, request.app.state.provider_counter)


async def get_db(request: Request) -> AsyncIterator[AsyncSession]:
    """The request's unit of work: committed when the route returns, rolled back on error."""
    factory = cast(async_sessionmaker[AsyncSession], request.app.state.sessionmaker)
    async with session_scope(factory) as session:
        yield session


async def get_read_db(request: Request) -> AsyncIterator[AsyncSession]:
    """A read-only unit of work for GET routes: one snapshot, never the SQLite write lock."""
    factory = cast(async_sessionmaker[AsyncSession], request.app.state.sessionmaker)
    async with read_scope(factory) as session:
        yield session


async def get_sessionmaker(request: Request) -> async_sessionmaker[AsyncSession]:
    """For work that outlives the route's unit of work (a streamed response)."""
    return cast(async_sessionmaker[AsyncSession], request.app.state.sessionmaker)


async def get_tenant(request: Request) -> str:
    """The tenant AuthMiddleware resolved before the body was read (resolved here when the
    app runs without it); "default" in open mode; 401 otherwise."""
    tenant = getattr(request.state, "tenant", None)
    if isinstance(tenant, str):
        return tenant
    keyring = cast(KeyRing, request.app.state.keyring)
    return resolve_tenant(keyring, request.headers.get("authorization"))


async def get_session_id(session_id: str) -> str:
    """The `{session_id}` of a path. An id no session can have (every id is created under
    SESSION_ID_PATTERN) is a 404 before any query: NUL or odd bytes never reach the database."""
    if not _SESSION_ID.fullmatch(session_id):
        raise SessionNotFound(session_id)
    return session_id


SettingsDep = Annotated[Settings, Depends(get_app_settings)]
RegistryDep = Annotated[ModelRegistry, Depends(get_registry)]
ProviderCounterDep = Annotated[ProviderCounter, Depends(get_provider_counter)]
# scope="function": commit when the route returns, *before* the response is sent, so a
# client that got 201 can read its write from any replica, and a failed commit is a
# failed request (the default "request" scope would commit after sending).
DbSession = Annotated[AsyncSession, Depends(get_db, scope="function")]
ReadDb = Annotated[AsyncSession, Depends(get_read_db, scope="function")]
Tenant = Annotated[str, Depends(get_tenant)]
Sessionmaker = Annotated[async_sessionmaker[AsyncSession], Depends(get_sessionmaker)]
SessionId = Annotated[str, Depends(get_session_id)]


def service(
    cls: Callable[[AsyncSession, str, Settings, ModelRegistry], S], *, read_only: bool = False
) -> Callable[..., Coroutine[Any, Any, S]]:
    """The dependency building `cls(db, tenant, settings, registry)` for a request, on the
    request's unit of work (`ReadDb` for a read-only one):
    `Sessions = Annotated[SessionService, Depends(service(SessionService))]`."""
    db_dependency = Depends(get_read_db if read_only else get_db, scope="function")

    async def build(
        tenant: Tenant,
        settings: SettingsDep,
        registry: RegistryDep,
        db: AsyncSession = db_dependency,
    ) -> S:
        return cls(db, tenant, settings, registry)

    return build


async def get_assembler(
    request: Request, tenant: Tenant, settings: SettingsDep, registry: RegistryDep
) -> ContextAssembler:
    """Works on `app.state.sessionmaker` in short units of work of its own (never the request
    transaction: a fold must not hold a connection across the summarizer call), with the
    summarizer factory given to `create_app`."""
    state = request.app.state
    factory = cast(SummarizerFactory, state.summarizer_factory)
    sessionmaker = cast(async_sessionmaker[AsyncSession], state.sessionmaker)
    read_path = cast(ReadPath, state.read_path)
    return ContextAssembler(
        sessionmaker,
        tenant,
        settings,
        registry,
        factory,
        read_path.snapshot,
        read_path.records,
        state.background_folds,
    )


Assembler = Annotated[ContextAssembler, Depends(get_assembler)]


async def get_response_cache(request: Request) -> ResponseCache:
    """The context bodies this replica keeps (app/services/response_cache.py)."""
    return cast(ReadPath, request.app.state.read_path).responses


ResponseCacheDep = Annotated[ResponseCache, Depends(get_response_cache)]
