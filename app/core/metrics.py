"""Prometheus metrics, shared by every layer (import the counters, call .inc()).

Request metrics are labelled by route *template* (`/sessions/{session_id}`), never by the
raw path, so a million session ids do not become a million time series. The same middleware
writes the access log: one line per request (FOLDWISE_ACCESS_LOG), and with it off one line
per refused (4xx) or failed (5xx) request, with its error code.
"""

from __future__ import annotations

import json
import time
from typing import Any

from prometheus_client import CONTENT_TYPE_LATEST, Counter, Gauge, Histogram, generate_latest
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from app.core.logging import get_logger, log_event

access_log = get_logger("foldwise.access")
# An error envelope is a few hundred bytes; a larger body is not read for its code.
MAX_ENVELOPE_BYTES = 4096

REQUESTS_TOTAL = Counter("foldwise_requests_total", "HTTP requests", ["method", "route", "status"])
REQUEST_SECONDS = Histogram(
    "foldwise_request_seconds",
    "HTTP request latency",
    ["method", "route"],
    buckets=(0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30),
)
FOLDS_TOTAL = Counter("foldwise_folds_total", "Summary folds committed", ["trigger", "method"])
SUMMARIZER_CALLS = Counter("foldwise_summarizer_calls_total", "Summarizer calls", ["strategy"])
SUMMARIZER_FALLBACKS = Counter(
    "foldwise_summarizer_fallbacks_total", "LLM summaries that fell back to rule", ["reason"]
)
MESSAGES_APPENDED = Counter("foldwise_messages_appended_total", "Messages stored")
CONTEXT_CACHE = Counter(
    "foldwise_context_cache_total",
    "GET context lookups in the response cache: hit, stale (found, changed since), miss",
    ["result"],
)
CONTEXT_LOADS = Counter(
    "foldwise_context_loads_total",
    "Snapshots read for a context: appended (only the messages new since a context served "
    "before), full",
    ["kind"],
)
CONTEXT_CACHE_EVICTIONS = Counter(
    "foldwise_context_cache_evictions_total", "Served contexts evicted to stay within the bytes"
)
CONTEXT_CACHE_BYTES = Gauge(
    "foldwise_context_cache_bytes", "Bytes of served contexts held by the cache of this process"
)
RETENTION_SWEEPS = Counter(
    "foldwise_retention_sweeps_total", "Retention sweeps run by this process", ["result"]
)
RETENTION_DELETED = Counter(
    "foldwise_retention_deleted_total",
    "Rows deleted by this process's retention sweeps: sessions, and their messages",
    ["kind"],
)

__all__ = [
    "CONTENT_TYPE_LATEST",
    "CONTEXT_CACHE",
    "CONTEXT_CACHE_BYTES",
    "CONTEXT_CACHE_EVICTIONS",
    "CONTEXT_LOADS",
    "FOLDS_TOTAL",
    "MESSAGES_APPENDED",
    "REQUESTS_TOTAL",
    "REQUEST_SECONDS",
    "RETENTION_DELETED",
    "RETENTION_SWEEPS",
    "SUMMARIZER_CALLS",
    "SUMMARIZER_FALLBACKS",
    "MetricsMiddleware",
    "render_metrics",
]


def render_metrics() -> bytes:
    return generate_latest()


def _route_template(scope: Scope) -> str:
    """The matched route's path template; the router records the route in the scope."""
    path = getattr(scope.get("route"), "path", None)
    return str(path) if path else "unmatched"


def _error_code(body: bytes) -> str | None:
    """The `error.code` of an error envelope (a fixed machine code, never request data)."""
    if len(body) > MAX_ENVELOPE_BYTES:
        return None
    try:
        code = json.loads(body)["error"]["code"]
    except (ValueError, TypeError, KeyError):
        return None
    return code if isinstance(code, str) else None


class MetricsMiddleware:
    """Counts requests and their latency by method, route template and status, and logs
    them: every request with `access_log`, else the refused ones only."""

    def __init__(self, app: ASGIApp, access_log: bool = True) -> None:
        self.app = app
        self.access_log = access_log

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        status = 500
        code: str | None = None
        started = time.perf_counter()

        async def recording_send(message: Message) -> None:
            nonlocal status, code
            if message["type"] == "http.response.start":
                status = int(message["status"])
            elif status >= 400 and code is None and message["type"] == "http.response.body":
                code = _error_code(message.get("body", b""))
            await send(message)

        try:
            await self.app(scope, receive, recording_send)
        finally:
            seconds = time.perf_counter() - started
            route = _route_template(scope)
            method = str(scope.get("method", ""))
            REQUESTS_TOTAL.labels(method, route, str(status)).inc()
            REQUEST_SECONDS.labels(method, route).observe(seconds)
            if self.access_log or status >= 400:
                self._log(scope, method, route, status, code, seconds)

    @staticmethod
    def _log(
        scope: Scope, method: str, route: str, status: int, code: str | None, seconds: float
    ) -> None:
        fields: dict[str, Any] = {
            "method": method,
            "route": route,
            "status": status,
            "duration_ms": round(seconds * 1000, 1),
            "tenant": scope.get("state", {}).get("tenant", "-"),
        }
        if status >= 400:
            fields["code"] = code or "-"
        event = "request" if status < 400 else "refused" if status < 500 else "failed"
        log_event(access_log, event, **fields)
