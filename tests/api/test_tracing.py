"""OpenTelemetry spans (app/core/tracing.py), caught by the SDK's in-memory exporter: the
standard FastAPI and SQLAlchemy instrumentations when tracing is on, Foldwise's own assemble,
fold and summarize spans with their numbers, and no content anywhere."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest
from opentelemetry import trace
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from app.main import create_app
from tests.support.apps import MakeClient, make_settings
from tests.support.factories import append, create_session, turns, user

PLANTED = "PLANTEDTRACE7f3a"
_EXPORTER = InMemorySpanExporter()


@pytest.fixture
def spans() -> Iterator[InMemorySpanExporter]:
    provider = trace.get_tracer_provider()
    if not isinstance(provider, TracerProvider):  # once per process: the global provider
        provider = TracerProvider()
        provider.add_span_processor(SimpleSpanProcessor(_EXPORTER))
        trace.set_tracer_provider(provider)
    _EXPORTER.clear()
    yield _EXPORTER
    _EXPORTER.clear()


def _named(finished: tuple[ReadableSpan, ...], name: str) -> list[ReadableSpan]:
    return [s for s in finished if s.name == name]


def _number(span: ReadableSpan, key: str) -> int:
    value = (span.attributes or {}).get(key)
    assert isinstance(value, int), (span.name, key, value)
    return value


async def test_a_request_with_a_fold_is_one_trace_of_standard_and_own_spans(
    db_url: str, make_client: MakeClient, spans: InMemorySpanExporter
) -> None:
    client = await make_client(create_app(make_settings(db_url, tracing=True, strategy="rule")))
    await create_session(client, id="traced", system_prompt=f"You are {PLANTED}.")
    await append(client, "traced", user(f"task {PLANTED}"), *turns(20))
    spans.clear()
    response = await client.get("/sessions/traced/context", params={"max_tokens": 2000})
    assert response.status_code == 200 and response.json()["summarized"]
    finished = spans.get_finished_spans()

    (request,) = [s for s in finished if s.name == "GET /sessions/{session_id}/context"]
    assert request.kind is trace.SpanKind.SERVER
    assert request.attributes is not None and request.attributes["http.route"] == (
        "/sessions/{session_id}/context"
    )
    statements = [s for s in finished if s.attributes and "db.statement" in s.attributes]
    assert statements and all(PLANTED not in str(s.attributes) for s in statements)
    (fold,) = _named(finished, "foldwise.fold")
    (summarize,) = _named(finished, "foldwise.summarize")
    assemblies = _named(finished, "foldwise.assemble")
    assert len(assemblies) >= 2  # planned the fold, then assembled after it
    assert fold.attributes is not None and summarize.attributes is not None
    assert fold.attributes["outcome"] == "folded" and fold.attributes["session"] == "traced"
    assert _number(fold, "tokens_before") > _number(fold, "tokens_after")
    assert summarize.attributes["method"] == "rule" and _number(summarize, "summary_tokens") > 0
    assert _number(assemblies[-1], "total_tokens") <= _number(assemblies[-1], "budget")
    assert {s.context.trace_id for s in assemblies} == {request.context.trace_id}
    # The fold runs beside the request (it may outlive it): a trace of its own, linked to it.
    (background,) = _named(finished, "foldwise.background_fold")
    assert [link.context.span_id for link in background.links] == [
        assemblies[0].parent.span_id if assemblies[0].parent else None
    ]
    assert background.links[0].context.trace_id == request.context.trace_id
    assert fold.parent is not None and fold.parent.span_id == background.context.span_id
    assert summarize.parent is not None and summarize.parent.span_id == fold.context.span_id
    everything = json.dumps([dict(s.attributes or {}) for s in finished])
    assert PLANTED not in everything


async def test_off_unless_configured(
    db_url: str, make_client: MakeClient, spans: InMemorySpanExporter
) -> None:
    client = await make_client(create_app(make_settings(db_url)))
    await create_session(client, id="quiet")
    assert (await client.get("/sessions/quiet")).status_code == 200
    finished = spans.get_finished_spans()
    assert not [(s.name, s.attributes) for s in finished if s.kind is trace.SpanKind.SERVER]
    assert not [s for s in finished if s.attributes and "db.statement" in s.attributes]


def test_an_otlp_endpoint_turns_it_on(monkeypatch: pytest.MonkeyPatch) -> None:
    from app.core.tracing import tracing_configured

    assert not tracing_configured(make_settings("sqlite://"))
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:4318")
    assert tracing_configured(make_settings("sqlite://"))
