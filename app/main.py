"""The application factory: settings → engine, keys, registry, middleware, handlers, routes."""

from __future__ import annotations

import asyncio
import math
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from fastapi import Depends, FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.middleware.cors import CORSMiddleware
from fastapi.responses import JSONResponse
from sqlalchemy.exc import DBAPIError, OperationalError
from sqlalchemy.exc import TimeoutError as PoolTimeout
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.routing import Match

from app.api.context_cache import ContextCacheMiddleware
from app.api.docs import mount_docs
from app.api.routes import (
    assemble_context,
    calibration,
    context,
    health,
    messages,
    sessions,
    summaries,
    summarize_context,
    tokens,
    transfer,
    turns,
)
from app.api.strict_query import reject_unknown_query
from app.core.db import create_engine, create_sessionmaker
from app.core.errors import FoldwiseError
from app.core.guards import RequestGuardMiddleware
from app.core.logging import get_logger
from app.core.metrics import MetricsMiddleware
from app.core.security import AuthMiddleware, BodySizeLimitMiddleware, KeyRing
from app.core.settings import Settings, get_settings
from app.core.startup import check_schema
from app.core.tracing import telemetry, traced_engine, tracing_configured
from app.inspector import PREFIX as INSPECTOR_PREFIX
from app.inspector import mount_inspector
from app.services.background_folds import BackgroundFolds
from app.services.folds import SummarizerFactory
from app.services.provider_counts import ProviderCounter
from app.services.read_path import ReadPath
from app.services.response_cache import ResponseCache
from app.services.retention import RetentionSweeper
from app.summarizers.factory import open_summarizer
from app.summarizers.template import fold_instructions
from app.tokens.counter import counter_for_encoding
from app.tokens.registry import load_registry

log = get_logger("foldwise")

# A validation error repeats the rejected value only up to this size.
MAX_ECHOED_CHARS = 200

_METHODS = ("GET", "POST", "PUT", "PATCH", "DELETE")
_HTTP_CODES = {
    400: "bad_request",
    401: "unauthorized",
    403: "forbidden",
    404: "not_found",
    405: "method_not_allowed",
    413: "payload_too_large",
    415: "unsupported_media_type",
}


def _json_safe(value: Any) -> Any:
    """Pydantic error payloads may hold exceptions, bytes or NaN: make them plain JSON."""
    if isinstance(value, dict):
        return {str(k): _json_safe(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_json_safe(v) for v in value]
    if isinstance(value, float) and not math.isfinite(value):
        return str(value)
    if isinstance(value, str):  # a lone surrogate cannot be encoded: show it escaped
        return value.encode("utf-8", "backslashreplace").decode("utf-8")
    if value is None or isinstance(value, int | float | bool):
        return value
    if isinstance(value, bytes):
        return value.decode("utf-8", "replace")
    return str(value)


def _envelope(
    status: int, code: str, message: str, details: Any = None, headers: dict[str, str] | None = None
) -> JSONResponse:
    body = {"error": {"code": code, "message": message, "details": details}}
    if status == 401:
        headers = {"WWW-Authenticate": "Bearer"}
    return JSONResponse(body, status_code=status, headers=headers)


async def _database_busy(_request: Request, exc: Exception) -> JSONResponse:
    # SQLite's write lock held past busy_timeout, an exhausted pool, or the database being
    # unreachable: nothing was written (the unit of work rolled back), so the client may retry.
    # The driver's error type only: its message may quote the statement or a value.
    log.warning("database unavailable: %s", type(getattr(exc, "orig", None) or exc).__name__)
    return _envelope(
        503,
        "database_unavailable",
        "the database is busy or unreachable; nothing was changed, retry shortly",
        headers={"Retry-After": "1"},
    )


async def _connection_lost(request: Request, exc: Exception) -> JSONResponse:
    # The pool does not ping a connection at checkout (a round trip per unit of work): a
    # connection the server closed (restart, idle timeout, failover) fails its first statement
    # instead. SQLAlchemy then discards the pool's older connections, so a retry succeeds.
    assert isinstance(exc, DBAPIError)
    if not exc.connection_invalidated:
        raise exc
    return await _database_busy(request, exc)


async def _foldwise_error(_request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, FoldwiseError)
    return _envelope(exc.status_code, exc.code, exc.message, _json_safe(exc.details))


def _small(value: Any) -> bool:
    return (
        value is None
        or isinstance(value, int | float | bool)
        or (isinstance(value, str) and len(value) <= MAX_ECHOED_CHARS)
    )


async def _validation_error(_request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, RequestValidationError)
    # The offending input is echoed only when small: a rejected message may be megabytes.
    errors = [
        {
            key: err[key]
            for key in ("type", "loc", "msg", "input", "ctx")
            if key in err and (key != "input" or _small(err[key]))
        }
        for err in exc.errors()
    ]
    first = errors[0] if errors else {}
    where = ".".join(str(part) for part in first.get("loc", ()))
    message = f"{where}: {first.get('msg', 'invalid request')}" if where else "invalid request"
    return _envelope(422, "validation_error", message, _json_safe(errors))


async def _http_error(request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, StarletteHTTPException)
    code = _HTTP_CODES.get(exc.status_code, "http_error")
    headers = dict(exc.headers or {})
    if exc.status_code == 405:  # Starlette's `Allow` names only the first route of the path
        headers["Allow"] = ", ".join(_allowed_methods(request))
    return _envelope(exc.status_code, code, str(exc.detail), headers=headers)


def _allowed_methods(request: Request) -> list[str]:
    """Every method some route answers on this path (RFC 9110: a 405 lists them all)."""
    routes = request.app.router.routes
    return [
        method
        for method in _METHODS
        if any(
            route.matches({**request.scope, "method": method})[0] is Match.FULL for route in routes
        )
    ]


def create_app(
    settings: Settings | None = None, *, summarizer_factory: SummarizerFactory = open_summarizer
) -> FastAPI:
    """Build the service for `settings` (default: environment / .env); folds open their
    summarizer through `summarizer_factory` (tests pass a fake)."""
    settings = settings or get_settings()
    keyring = KeyRing.from_config(settings.api_keys.get_secret_value())
    registry = load_registry(settings)
    fold_instructions(settings)  # a bad summarizer template refuses to start (TemplateError)

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        # Build the encodings now (~1-2 s each), not inside the first request.
        for encoding in {model.encoding for model in registry.all()}:
            await asyncio.to_thread(counter_for_encoding, encoding)
        engine = create_engine(settings.database_url)
        try:
            await check_schema(engine)
        except BaseException:
            await engine.dispose()
            raise
        app.state.engine = engine
        app.state.sessionmaker = create_sessionmaker(engine)
        read_path.open(engine)
        retention = RetentionSweeper(app.state.sessionmaker, settings)
        retention.start()
        if keyring.is_open:
            log.warning(
                "no FOLDWISE_API_KEYS configured: running OPEN, every caller is tenant 'default'"
            )
        try:
            with traced_engine(engine, traced):
                yield
        finally:
            await retention.close()
            await background_folds.close()
            await provider_counter.aclose()
            await read_path.close()
            await engine.dispose()

    app = FastAPI(
        title="Foldwise",
        version="0.1.0",
        summary="Keeps long LLM conversations inside the model's context window.",
        lifespan=lifespan,
        docs_url=None,  # served by mount_docs, from packaged assets
        redoc_url=None,
        dependencies=[Depends(reject_unknown_query)],  # every route: unknown query keys are 422
        telemetry=telemetry(settings),  # request spans when tracing is configured (tracing.py)
    )
    traced = tracing_configured(settings)
    app.state.settings = settings
    app.state.keyring = keyring
    app.state.registry = registry
    app.state.summarizer_factory = summarizer_factory
    read_path = ReadPath(ResponseCache(settings.context_cache_bytes))
    app.state.read_path = read_path
    background_folds = BackgroundFolds()
    app.state.background_folds = background_folds
    provider_counter = ProviderCounter(settings)
    app.state.provider_counter = provider_counter

    app.add_exception_handler(FoldwiseError, _foldwise_error)
    app.add_exception_handler(RequestValidationError, _validation_error)
    app.add_exception_handler(StarletteHTTPException, _http_error)
    app.add_exception_handler(OperationalError, _database_busy)
    app.add_exception_handler(DBAPIError, _connection_lost)
    app.add_exception_handler(PoolTimeout, _database_busy)

    # Added innermost first: metrics wrap the guard (deadline, 500 envelope), which wraps CORS,
    # which wraps auth and the body limit, so a 401 or 413 still carries CORS headers and is
    # counted, and auth answers before any body is read. Innermost, a response cache
    # hit is answered for the tenant auth resolved, before routing.
    app.add_middleware(ContextCacheMiddleware, read_path=read_path)
    app.add_middleware(BodySizeLimitMiddleware, max_bytes=settings.max_body_bytes)
    app.add_middleware(AuthMiddleware, keyring=keyring, open_prefixes=(INSPECTOR_PREFIX,))
    if settings.cors_origins:
        app.add_middleware(
            CORSMiddleware,
            allow_origins=settings.cors_origins,
            allow_methods=["GET", "POST", "PATCH", "DELETE", "OPTIONS"],
            allow_headers=["Authorization", "Content-Type"],
            max_age=600,
        )
    app.add_middleware(RequestGuardMiddleware, deadline_s=settings.request_timeout_s)
    app.add_middleware(MetricsMiddleware, access_log=settings.access_log)

    features = (health, sessions, messages, turns, tokens, context, assemble_context, summaries)
    for module in (*features, calibration, summarize_context, transfer):
        app.include_router(module.router)
    mount_inspector(app)
    mount_docs(app, keys_required=not keyring.is_open)
    return app


__all__ = ["create_app"]
