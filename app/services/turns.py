"""A turn in one request (SPEC §13): append messages, then serve the context a GET …/context
of the same query would serve right after.

Order, and why:
1. The whole request is valid before anything is stored: the body's schema (FastAPI), then
   what the context query names that the registry must know (`model`). A refused turn
   stores nothing.
2. The append is `MessageService.append` in a unit of work of its own, committed before the
   context is read: the assembler reads and writes in short units of work on the same
   sessionmaker (a fold must not hold a connection across the summarizer call, and SQLite
   has one writer), so it could neither see nor wait for an open append transaction.
3. The context goes through `serve_context`, the GET route's path: same options, same
   assembler, same response cache. Its key is the query string GET would send for the same
   query (`query_key`), so consecutive turns build on the snapshot the previous one served
   (only the new messages are read), and a GET with that query string right after is a
   cache hit.

A retried turn (every message's `client_id` already stored) stores nothing, and its context
is what GET answers right after the first attempt: the same messages, with `usage.cache`
measured against the first attempt's context and `summarized: false`.

Whether a budget is too small for the session's system prompt and tools is only known by
assembling, after the append: such an error keeps its status and code, its message says the
messages were stored, and its `details` become `{"append": <the append result>, "context":
<the error's own details>}` (a retry with the same `client_id`s stores nothing twice).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any
from urllib.parse import urlencode

from app.core.context_settings import SETTINGS_KEYS
from app.core.db import session_scope
from app.core.errors import FoldwiseError
from app.schemas.context import ContextRequest
from app.schemas.messages import AppendResult
from app.services.context import ContextAssembler
from app.services.context_load import context_options
from app.services.messages import MessageService
from app.services.response_cache import ResponseCache, serve_context
from app.summarizers.factory import require_allowed


def query_key(request: ContextRequest) -> bytes:
    """The query string of GET …/context for `request`: the values that differ from the
    defaults, GET's own parameters first (in the order the clients send them), then the
    settings in their declared order. It parses back to the same options, which is what a
    response cache key promises."""
    given = request.model_dump(exclude_defaults=True)
    order = [key for key in given if key not in SETTINGS_KEYS]
    order += [key for key in SETTINGS_KEYS if key in given]
    return urlencode([(key, _query_text(given[key])) for key in order]).encode()


def _query_text(value: Any) -> str:
    return ("true" if value else "false") if isinstance(value, bool) else str(value)


def turn_body(append: AppendResult, context: bytes) -> bytes:
    """`{"append": …, "context": …}`: the context's bytes as GET sends them, untouched."""
    return b'{"append":' + append.model_dump_json().encode() + b',"context":' + context + b"}"


class TurnService:
    def __init__(self, assembler: ContextAssembler, responses: ResponseCache) -> None:
        self.assembler = assembler
        self.responses = responses

    async def take(
        self, session_id: str, messages: Sequence[Mapping[str, Any]], request: ContextRequest
    ) -> bytes:
        """Append `messages` (one transaction), then serve the context of `request`."""
        assembler = self.assembler
        if request.model is not None:
            assembler.registry.get(request.model)  # UnknownModel (422) before anything is stored
        options = context_options(request)
        require_allowed(assembler.settings, options.overrides.get("summarizer"))
        async with session_scope(assembler.sessionmaker) as db:
            service = MessageService(db, assembler.tenant, assembler.settings, assembler.registry)
            appended = await service.append(session_id, messages)
        try:
            context = await serve_context(
                self.responses, assembler, session_id, query_key(request), options
            )
        except FoldwiseError as error:
            error.message += " (the turn's messages were stored: details.append)"
            error.details = {"append": appended.model_dump(mode="json"), "context": error.details}
            raise
        return turn_body(appended, context)


__all__ = ["TurnService", "query_key", "turn_body"]
