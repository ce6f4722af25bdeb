"""One function per route: the request to make and how to read its answer. `Foldwise` and
`AsyncFoldwise` differ only in how they send a `Call` (client.py, async_client.py)."""

from __future__ import annotations

import uuid
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Generic, TypeVar, cast
from urllib.parse import quote

from foldwise_client.context import Context, Turn
from foldwise_client.types import (
    AppendResult,
    ContextQuery,
    ContextSettings,
    Format,
    MessageFormat,
    MessagePage,
    ModelInfo,
    PoppedMessage,
    Session,
    SessionImport,
    SessionPage,
    SessionsDeleted,
    SessionSettings,
    SessionSort,
    SortOrder,
    Strategy,
    SummarizeContextResult,
    SummarizeMode,
    SummarizeResult,
    SummaryHistoryPage,
    TokenCount,
    UsageReportResult,
)

T = TypeVar("T")


class _Unset:
    """Marks an argument not given (PATCH sends only the fields given; None means null)."""

    def __repr__(self) -> str:
        return "UNSET"


UNSET: Any = _Unset()


@dataclass(frozen=True)
class Call(Generic[T]):
    """`idempotent`: safe to send again when the connection broke after the request may have
    reached the server. Requests that never reached it (connect errors) and 503 answers
    (nothing changed) are retried whatever this says."""

    method: str
    path: str
    parse: Callable[[Any], T]
    params: dict[str, Any] | None = None
    body: Any = None
    idempotent: bool = True
    # A retry answered 404 means the first attempt did it (a delete whose answer was lost).
    gone_after_retry_ok: bool = False
    # The body is JSONL text (a session export), sent as application/x-ndjson.
    jsonl_body: bool = False


def _as(_: type[T]) -> Callable[[Any], T]:
    return lambda body: cast(T, body)


def _none(_: Any) -> None:
    return None


def _session_path(session_id: str, *rest: str) -> str:
    return "/".join(["/sessions", quote(session_id, safe=""), *rest])


def _given(**fields: Any) -> dict[str, Any]:
    """The arguments that were given (not None)."""
    return {k: v for k, v in fields.items() if v is not None}


def create_session(
    id: str | None,
    model: str | None,
    system_prompt: str | None,
    tools: Sequence[Mapping[str, Any]] | None,
    settings: SessionSettings | None,
    metadata: Mapping[str, Any] | None,
) -> Call[Session]:
    body = _given(
        id=id,
        model=model,
        system_prompt=system_prompt,
        tools=list(tools) if tools is not None else None,
        settings=settings,
        metadata=metadata,
    )
    # Not idempotent: a resent create answers 409 session_exists (or makes a second UUID).
    return Call("POST", "/sessions", _as(Session), body=body, idempotent=False)


def get_session(session_id: str) -> Call[Session]:
    return Call("GET", _session_path(session_id), _as(Session))


def list_sessions(
    limit: int | None,
    cursor: str | None,
    sort: SessionSort | None,
    order: SortOrder | None,
    id_prefix: str | None,
) -> Call[SessionPage]:
    params = _given(limit=limit, cursor=cursor, sort=sort, order=order, id_prefix=id_prefix)
    return Call("GET", "/sessions", _as(SessionPage), params=params)


def update_session(session_id: str, fields: Mapping[str, Any]) -> Call[Session]:
    body = {k: v for k, v in fields.items() if v is not UNSET}
    return Call("PATCH", _session_path(session_id), _as(Session), body=body)


def delete_session(session_id: str) -> Call[None]:
    return Call("DELETE", _session_path(session_id), _none, gone_after_retry_ok=True)


def delete_sessions(id_prefix: str) -> Call[SessionsDeleted]:
    return Call("DELETE", "/sessions", _as(SessionsDeleted), params={"id_prefix": id_prefix})


def export_session(session_id: str) -> Call[str]:
    return Call("GET", _session_path(session_id, "export"), _as(str))


def import_session(jsonl: str) -> Call[SessionImport]:
    return Call("POST", "/sessions/import", _as(SessionImport), body=jsonl, jsonl_body=True)


def with_client_ids(messages: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Copies of `messages`, each with a `client_id` (a new UUID where none was given): the
    server stores a `client_id` once, so resending the batch stores nothing twice."""
    return [
        dict(m) if m.get("client_id") else {**m, "client_id": str(uuid.uuid4())} for m in messages
    ]


def append_messages(session_id: str, messages: Sequence[Mapping[str, Any]]) -> Call[AppendResult]:
    body = {"messages": with_client_ids(messages)}
    return Call("POST", _session_path(session_id, "messages"), _as(AppendResult), body=body)


def list_messages(
    session_id: str, after_seq: int | None, limit: int | None, format: MessageFormat | None
) -> Call[MessagePage]:
    params = _given(after_seq=after_seq, limit=limit, format=format)
    return Call("GET", _session_path(session_id, "messages"), _as(MessagePage), params=params)


def pop_message(session_id: str) -> Call[PoppedMessage]:
    path = _session_path(session_id, "messages", "last")
    return Call("DELETE", path, _as(PoppedMessage), idempotent=False)


def _query(value: Any) -> Any:
    return ("true" if value else "false") if isinstance(value, bool) else value


def context(
    session_id: str,
    model: str | None,
    max_tokens: int | None,
    format: Format | None,
    summarize: SummarizeMode | None,
    explain: bool | None,
    preview: bool | None,
    dry_run: bool | None,
    settings: ContextSettings,
) -> Call[Context]:
    given = _given(
        model=model,
        max_tokens=max_tokens,
        format=format,
        summarize=summarize,
        explain=explain,
        preview=preview,
        dry_run=dry_run,
        **settings,
    )
    params = {k: _query(v) for k, v in given.items()}
    # A GET that may fold: a resent one reuses the fold (one per summary version).
    return Call("GET", _session_path(session_id, "context"), Context.from_json, params=params)


def turn(session_id: str, messages: Sequence[Mapping[str, Any]], query: ContextQuery) -> Call[Turn]:
    body = {"messages": with_client_ids(messages), "context": _given(**query)}
    # Safe to resend: every message has a client_id, so a retry stores nothing twice and
    # answers the context again.
    return Call("POST", _session_path(session_id, "turn"), Turn.from_json, body=body)


def assemble_context(
    messages: Sequence[Mapping[str, Any]],
    system: str | None,
    summary: str | None,
    tools: Sequence[Mapping[str, Any]] | None,
    model: str | None,
    max_tokens: int | None,
    format: Format | None,
    explain: bool | None,
    settings: ContextSettings,
) -> Call[Context]:
    body = _given(
        messages=list(messages),
        system=system,
        summary=summary,
        tools=list(tools) if tools is not None else None,
        model=model,
        max_tokens=max_tokens,
        format=format,
        explain=explain,
        **settings,
    )
    return Call("POST", "/assemble-context", Context.from_json, body=body)


def summarize(
    session_id: str, focus: str | None, strategy: Strategy | None, max_summary_tokens: int | None
) -> Call[SummarizeResult]:
    body = _given(focus=focus, strategy=strategy, max_summary_tokens=max_summary_tokens)
    path = _session_path(session_id, "summarize")
    return Call("POST", path, _as(SummarizeResult), body=body, idempotent=False)


def list_summaries(
    session_id: str, limit: int | None, cursor: str | None
) -> Call[SummaryHistoryPage]:
    params = _given(limit=limit, cursor=cursor)
    path = _session_path(session_id, "summaries")
    return Call("GET", path, _as(SummaryHistoryPage), params=params)


def clear(session_id: str) -> Call[Session]:
    return Call("POST", _session_path(session_id, "clear"), _as(Session), idempotent=False)


def report_usage(
    session_id: str, input_tokens: int, model: str | None, unserved: Mapping[str, Any] | None
) -> Call[UsageReportResult]:
    body = _given(input_tokens=input_tokens, model=model, unserved=unserved)
    path = _session_path(session_id, "usage")
    # Not idempotent: each report moves the calibration ratio.
    return Call("POST", path, _as(UsageReportResult), body=body, idempotent=False)


def count_tokens(
    text: str | None,
    messages: Sequence[Mapping[str, Any]] | None,
    tools: Sequence[Mapping[str, Any]] | None,
    model: str | None,
) -> Call[TokenCount]:
    body = _given(
        text=text,
        messages=list(messages) if messages is not None else None,
        tools=list(tools) if tools is not None else None,
        model=model,
    )
    return Call("POST", "/count-tokens", _as(TokenCount), body=body)


def summarize_context(
    messages: Sequence[Mapping[str, Any]],
    previous_summary: str | None,
    strategy: Strategy | None,
    max_summary_tokens: int | None,
    instructions: str | None,
    summarizer: str | None = None,
) -> Call[SummarizeContextResult]:
    body = _given(
        messages=list(messages),
        previous_summary=previous_summary,
        strategy=strategy,
        max_summary_tokens=max_summary_tokens,
        instructions=instructions,
        summarizer=summarizer,
    )
    return Call("POST", "/summarize-context", _as(SummarizeContextResult), body=body)


def list_models() -> Call[list[ModelInfo]]:
    return Call("GET", "/models", lambda body: cast(list[ModelInfo], body["models"]))
