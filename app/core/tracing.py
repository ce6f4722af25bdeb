"""OpenTelemetry traces: an optional extra (`pip install 'foldwise[otel]'`), off unless configured.

Configured means `FOLDWISE_TRACING=true`, or an OTLP endpoint in the standard variables
(`OTEL_EXPORTER_OTLP_ENDPOINT`, `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`). Then:

- each request is a span of FastAPI's own OpenTelemetry support (`FastAPI(telemetry=…)`,
  the probes, /metrics, the docs and the Inspector's assets excluded), and each SQL statement
  one of the standard SQLAlchemy instrumentation;
- `span()` adds Foldwise's own steps under them: `foldwise.assemble`, `foldwise.fold` and
  `foldwise.summarize`, with the numbers the log lines carry as attributes (ids, counts,
  tokens before and after, never content).

Spans go to the TracerProvider already set (an operator's own SDK setup, or a test's), else
to an OTLP/HTTP exporter configured by the standard `OTEL_*` variables. Unconfigured,
FastAPI records nothing and `span()` is a no-op (the API's default provider); asking for
tracing without the extra is a start-up error. FastAPI's OpenTelemetry logs stay off: they
carry exception messages, which may quote request content. The Anthropic SDK talks through
httpx2, which the httpx instrumentation does not see: the LLM call is `foldwise.summarize`.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator, MutableMapping
from contextlib import contextmanager
from typing import Any

from fastapi.telemetry import TelemetryConfig
from opentelemetry import trace  # the API comes with FastAPI; the SDK with the extra
from sqlalchemy.ext.asyncio import AsyncEngine

from app.core.settings import Settings

# A proxy until a provider is set, then that provider's tracer.
_TRACER = trace.get_tracer("foldwise")
OTLP_ENDPOINTS = ("OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT")
UNTRACED_PATHS = frozenset({"/healthz", "/readyz", "/metrics", "/openapi.json"})
UNTRACED_PREFIXES = ("/docs", "/redoc", "/inspect")
Record = Callable[..., None]


class TracingUnavailable(RuntimeError):
    """Tracing is configured but the `otel` extra is not installed."""


def tracing_configured(settings: Settings) -> bool:
    return settings.tracing or any(os.environ.get(name) for name in OTLP_ENDPOINTS)


def telemetry(settings: Settings) -> TelemetryConfig:
    """`FastAPI(telemetry=…)`: request spans when tracing is configured, nothing otherwise."""
    if not tracing_configured(settings):
        return {"tracing": False, "metrics": False, "logs": False, "operation_spans": False}
    _ensure_provider()
    return {
        "tracing": True,
        "metrics": False,  # /metrics has them
        "logs": False,
        "operation_spans": False,
        "exclude": _untraced,
    }


def _untraced(scope: MutableMapping[str, Any]) -> bool:
    path = str(scope.get("path", ""))
    return path in UNTRACED_PATHS or path.startswith(UNTRACED_PREFIXES)


@contextmanager
def traced_engine(engine: AsyncEngine, traced: bool) -> Iterator[None]:
    """While open, a span per SQL statement of `engine` when `traced` (statements only:
    parameters are never recorded). The instrumentor is one per process: undone at the end."""
    if not traced:
        yield
        return
    from opentelemetry.instrumentation.sqlalchemy import SQLAlchemyInstrumentor

    instrumentor = SQLAlchemyInstrumentor()
    # It declares SQLAlchemy < 2.1 and would refuse 2.1 silently; it only listens to the
    # engine's cursor events, unchanged in 2.1 (tests/api/test_tracing.py holds it to that).
    instrumentor.instrument(engine=engine.sync_engine, enable_commenter=False, skip_dep_check=True)
    try:
        yield
    finally:
        instrumentor.uninstrument()


def _ensure_provider() -> None:
    try:
        from opentelemetry.sdk.resources import Resource
        from opentelemetry.sdk.trace import TracerProvider
    except ImportError as exc:
        raise TracingUnavailable(
            "tracing is configured (FOLDWISE_TRACING or OTEL_EXPORTER_OTLP_*ENDPOINT) but "
            "the otel extra is not installed: pip install 'foldwise[otel]'"
        ) from exc

    if isinstance(trace.get_tracer_provider(), TracerProvider):
        return  # set up already: by the operator's own SDK configuration, or a test
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
    from opentelemetry.sdk.trace.export import BatchSpanProcessor

    # Resource.create reads OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES over this default.
    provider = TracerProvider(resource=Resource.create({"service.name": "foldwise"}))
    provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter()))
    trace.set_tracer_provider(provider)


def current_links() -> list[Any]:
    """A link to the current span, for work that outlives it in a trace of its own (a
    background fold started by a request)."""
    context = trace.get_current_span().get_span_context()
    return [trace.Link(context)] if context.is_valid else []


@contextmanager
def span(name: str, links: list[Any] | None = None, **attributes: Any) -> Iterator[Record]:
    """A span `name` under the current one, with `attributes` (and `links`); yields
    `record(**more)` to add attributes known only at the end (tokens after, the outcome)."""
    with _TRACER.start_as_current_span(name, links=links, attributes=attributes) as current:
        yield lambda **more: current.set_attributes(more)
