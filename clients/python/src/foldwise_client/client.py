"""`Foldwise`: the synchronous client (method list: clients/python/README.md)."""

from __future__ import annotations

import time
from collections.abc import Iterator, Mapping, Sequence
from types import TracebackType
from typing import Any, TypeVar, Unpack

import httpx

from foldwise_client import _calls, _transport
from foldwise_client._calls import UNSET, Call
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
    StoredMessage,
    Strategy,
    SummarizeContextResult,
    SummarizeMode,
    SummarizeResult,
    SummaryHistoryPage,
    TokenCount,
    UsageReportResult,
)

T = TypeVar("T")


class Foldwise:
    """A Foldwise server. `base_url` defaults to `$FOLDWISE_BASE_URL`, else
    http://127.0.0.1:8000; `api_key` to `$FOLDWISE_API_KEY`. Retries 503 answers and
    connection errors (`max_retries` times, see `_transport.may_retry_error`)."""

    def __init__(
        self,
        base_url: str | None = None,
        api_key: str | None = None,
        *,
        timeout: float | httpx.Timeout = _transport.DEFAULT_TIMEOUT_S,
        max_retries: int = _transport.DEFAULT_MAX_RETRIES,
        http_client: httpx.Client | None = None,
    ) -> None:
        self.base_url = _transport.base_url_or_env(base_url)
        self.max_retries = max_retries
        self.api_key, self.timeout = api_key, timeout  # as given (None: the environment's)
        self._owns_http = http_client is None
        self._http = http_client or httpx.Client(timeout=timeout)
        self._headers = _transport.headers(api_key)

    def close(self) -> None:
        if self._owns_http:
            self._http.close()

    def __enter__(self) -> Foldwise:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.close()

    def _run(self, call: Call[T]) -> T:
        url = self.base_url + call.path
        args = _transport.request_args(call)
        headers = self._headers | args.pop("headers", {})
        attempt = 0
        while True:
            try:
                response = self._http.request(call.method, url, headers=headers, **args)
            except httpx.TransportError as error:
                if attempt >= self.max_retries or not _transport.may_retry_error(call, error):
                    raise _transport.connection_error(call, url, error) from error
                time.sleep(_transport.backoff_s(attempt))
            else:
                if attempt >= self.max_retries or not _transport.may_retry_response(response):
                    return _transport.result(call, response, attempt)
                time.sleep(_transport.backoff_s(attempt, response))
            attempt += 1

    # Sessions

    def create_session(
        self,
        id: str | None = None,
        *,
        model: str | None = None,
        system_prompt: str | None = None,
        tools: Sequence[Mapping[str, Any]] | None = None,
        settings: SessionSettings | None = None,
        metadata: Mapping[str, Any] | None = None,
    ) -> Session:
        return self._run(_calls.create_session(id, model, system_prompt, tools, settings, metadata))

    def get_session(self, session_id: str) -> Session:
        return self._run(_calls.get_session(session_id))

    def list_sessions(
        self,
        *,
        limit: int | None = None,
        cursor: str | None = None,
        sort: SessionSort | None = None,
        order: SortOrder | None = None,
        id_prefix: str | None = None,
    ) -> SessionPage:
        return self._run(_calls.list_sessions(limit, cursor, sort, order, id_prefix))

    def iter_sessions(
        self,
        *,
        sort: SessionSort | None = None,
        order: SortOrder | None = None,
        id_prefix: str | None = None,
        page_size: int = 100,
    ) -> Iterator[Session]:
        cursor: str | None = None
        while True:
            page = self.list_sessions(
                limit=page_size, cursor=cursor, sort=sort, order=order, id_prefix=id_prefix
            )
            yield from page["sessions"]
            cursor = page["next_cursor"]
            if cursor is None:
                return

    def update_session(
        self,
        session_id: str,
        *,
        model: str = UNSET,
        system_prompt: str | None = UNSET,
        tools: Sequence[Mapping[str, Any]] | None = UNSET,
        settings: Mapping[str, Any] = UNSET,
        metadata: Mapping[str, Any] = UNSET,
    ) -> Session:
        """Changes only the arguments given; `None` clears `system_prompt` / `tools`, and a
        settings key set to None removes that override."""
        fields = {
            "model": model,
            "system_prompt": system_prompt,
            "tools": tools,
            "settings": settings,
            "metadata": metadata,
        }
        return self._run(_calls.update_session(session_id, fields))

    def delete_session(self, session_id: str) -> None:
        self._run(_calls.delete_session(session_id))

    def delete_sessions(self, id_prefix: str) -> SessionsDeleted:
        """Every session of this tenant whose id starts with `id_prefix`, with all its rows."""
        return self._run(_calls.delete_sessions(id_prefix))

    def export_session(self, session_id: str) -> str:
        """The session as JSONL: session, messages in seq order, summaries, an `end` record."""
        return self._run(_calls.export_session(session_id))

    def import_session(self, jsonl: str) -> SessionImport:
        """Restores an export with its ids, seqs and summary versions (idempotent by id)."""
        return self._run(_calls.import_session(jsonl))

    # Messages

    def append_messages(
        self, session_id: str, messages: Sequence[Mapping[str, Any]]
    ) -> AppendResult:
        """Appends atomically. Each message without a `client_id` gets a new UUID one first,
        so a retried request stores nothing twice (the retry answers `duplicate: true`)."""
        return self._run(_calls.append_messages(session_id, messages))

    def list_messages(
        self,
        session_id: str,
        *,
        after_seq: int | None = None,
        limit: int | None = None,
        format: MessageFormat | None = None,
    ) -> MessagePage:
        """`format="openai_responses"`: each message also as Responses input items (`items`)."""
        return self._run(_calls.list_messages(session_id, after_seq, limit, format))

    def iter_messages(
        self,
        session_id: str,
        *,
        after_seq: int = 0,
        page_size: int = 500,
        format: MessageFormat | None = None,
    ) -> Iterator[StoredMessage]:
        cursor: int | None = after_seq
        while cursor is not None:
            page = self.list_messages(session_id, after_seq=cursor, limit=page_size, format=format)
            yield from page["messages"]
            cursor = page["next_after_seq"]

    def pop_message(self, session_id: str) -> PoppedMessage:
        """Removes the newest stored message and returns it (with `items`, its Responses
        rendering). NoMessagesError when there is none; ConflictError when it is folded."""
        return self._run(_calls.pop_message(session_id))

    # Context

    def context(
        self,
        session_id: str,
        *,
        model: str | None = None,
        max_tokens: int | None = None,
        format: Format | None = None,
        summarize: SummarizeMode | None = None,
        explain: bool | None = None,
        preview: bool | None = None,
        dry_run: bool | None = None,
        **settings: Unpack[ContextSettings],
    ) -> Context:
        return self._run(
            _calls.context(
                session_id,
                model,
                max_tokens,
                format,
                summarize,
                explain,
                preview,
                dry_run,
                settings,
            )
        )

    def turn(
        self,
        session_id: str,
        messages: Sequence[Mapping[str, Any]],
        **query: Unpack[ContextQuery],
    ) -> Turn:
        """Appends `messages` (each given a `client_id` when it has none, as `append_messages`
        does), then returns the context `context(session_id, **query)` would return right
        after, in one request. A retry stores nothing twice (`duplicate: true`)."""
        return self._run(_calls.turn(session_id, messages, query))

    def assemble_context(
        self,
        messages: Sequence[Mapping[str, Any]],
        *,
        system: str | None = None,
        summary: str | None = None,
        tools: Sequence[Mapping[str, Any]] | None = None,
        model: str | None = None,
        max_tokens: int | None = None,
        format: Format | None = None,
        explain: bool | None = None,
        **settings: Unpack[ContextSettings],
    ) -> Context:
        return self._run(
            _calls.assemble_context(
                messages, system, summary, tools, model, max_tokens, format, explain, settings
            )
        )

    def summarize(
        self,
        session_id: str,
        *,
        focus: str | None = None,
        strategy: Strategy | None = None,
        max_summary_tokens: int | None = None,
    ) -> SummarizeResult:
        return self._run(_calls.summarize(session_id, focus, strategy, max_summary_tokens))

    def list_summaries(
        self, session_id: str, *, limit: int | None = None, cursor: str | None = None
    ) -> SummaryHistoryPage:
        return self._run(_calls.list_summaries(session_id, limit, cursor))

    def clear(self, session_id: str) -> Session:
        return self._run(_calls.clear(session_id))

    def report_usage(
        self,
        session_id: str,
        input_tokens: int,
        *,
        model: str | None = None,
        unserved: Mapping[str, Any] | None = None,
    ) -> UsageReportResult:
        """`unserved`: what the provider request carried beyond the last context served
        (`system`, `messages`, `tools`: an agent's own instructions and tools, new input)."""
        return self._run(_calls.report_usage(session_id, input_tokens, model, unserved))

    # Stateless

    def count_tokens(
        self,
        *,
        text: str | None = None,
        messages: Sequence[Mapping[str, Any]] | None = None,
        tools: Sequence[Mapping[str, Any]] | None = None,
        model: str | None = None,
    ) -> TokenCount:
        return self._run(_calls.count_tokens(text, messages, tools, model))

    def summarize_context(
        self,
        messages: Sequence[Mapping[str, Any]],
        *,
        previous_summary: str | None = None,
        strategy: Strategy | None = None,
        max_summary_tokens: int | None = None,
        instructions: str | None = None,
        summarizer: str | None = None,
    ) -> SummarizeContextResult:
        return self._run(
            _calls.summarize_context(
                messages, previous_summary, strategy, max_summary_tokens, instructions, summarizer
            )
        )

    def list_models(self) -> list[ModelInfo]:
        return self._run(_calls.list_models())
