"""Prometheus metrics, shared by every layer (import the counters, call .inc()).

Request metrics are labelled by route *template* (`/sessions/{session_id}`), never by the
raw path, so a million session ids do not become a million time series.
"""

from __future__ import annotations

import time

from prometheus_client import CONTENT_TYPE_LATEST, Counter, Gauge, Histogram, generate_latest
from starlette.types import ASGIApp, Message, Receive, Scope, Send

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
    "GET context lookups in the served-context cache: hit, stale (found, changed since), miss",
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


class MetricsMiddleware:
    """Counts requests and their latency by method, route template and status."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        status = 500
        started = time.perf_counter()

        async def recording_send(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = int(message["status"])
            await send(message)

        try:
            await self.app(scope, receive, recording_send)
        finally:
            route = _route_template(scope)
            method = str(scope.get("method", ""))
            REQUESTS_TOTAL.labels(method, route, str(status)).inc()
            REQUEST_SECONDS.labels(method, route).observe(time.perf_counter() - started)
