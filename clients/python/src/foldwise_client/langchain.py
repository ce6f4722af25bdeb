"""LangChain and LangGraph adapters (extra `[langchain]`).

- `FoldwiseChatMessageHistory`: a `BaseChatMessageHistory` whose `messages` are the session's
  folded context (what to send next), not every stored message.
- `FoldwiseHook`: a LangGraph `create_react_agent` `pre_model_hook` that stores the graph's new
  messages in the session and returns `llm_input_messages`, the context after them, in one
  request (POST …/turn; the state's `messages` stay whole), and a `post_model_hook` that
  stores the model's reply at once.

Messages are stored with their LangChain id as `client_id`, so posting one twice stores it once.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Mapping, Sequence
from typing import Any, TypedDict, TypeVar, Unpack

from langchain_core.chat_history import BaseChatMessageHistory
from langchain_core.messages import BaseMessage
from langchain_core.runnables import RunnableConfig, RunnableLambda

from foldwise_client._lc_messages import client_id_of, to_foldwise, to_langchain
from foldwise_client.async_client import AsyncFoldwise
from foldwise_client.client import Foldwise
from foldwise_client.errors import FoldwiseError, SessionExistsError, SessionNotFoundError

MAX_BATCH = 1000  # the server's largest append
logger = logging.getLogger(__name__)


Client = TypeVar("Client", Foldwise, AsyncFoldwise)


class AdapterOptions(TypedDict, total=False):
    """What every LangChain adapter takes: the clients (sync calls use `client`, async ones
    `async_client`), how a missing session is created (`model`, `system_prompt`, `tools`,
    `settings`, `metadata`) and the query of every context read (`max_tokens`, `model`, any
    context setting)."""

    client: Foldwise | None
    async_client: AsyncFoldwise | None
    session_options: Mapping[str, Any] | None
    context_options: Mapping[str, Any] | None


def _like(given: Foldwise | AsyncFoldwise | None, cls: type[Client]) -> Client:
    if given is None:
        return cls()
    return cls(given.base_url, given.api_key, timeout=given.timeout, max_retries=given.max_retries)


def _last_batch(payload: list[dict[str, Any]]) -> int:
    """Where the last batch of at most MAX_BATCH messages starts."""
    return (len(payload) - 1) // MAX_BATCH * MAX_BATCH


class _Sessions:
    """The clients and options shared by the adapters; creates a missing session on first
    write with `session_options` (model, system_prompt, tools, settings, metadata)."""

    def __init__(self, options: AdapterOptions) -> None:
        self._client = options.get("client")
        self._async_client = options.get("async_client")
        self.session_options = dict(options.get("session_options") or {})
        self.context_options = {**(options.get("context_options") or {}), "format": "openai"}

    @property
    def client(self) -> Foldwise:
        """`client=`, else one like `async_client=` (same server, key, timeout, retries),
        else the environment's; `async_client` the same the other way round."""
        if self._client is None:
            self._client = _like(self._async_client, Foldwise)
        return self._client

    @property
    def async_client(self) -> AsyncFoldwise:
        if self._async_client is None:
            self._async_client = _like(self._client, AsyncFoldwise)
        return self._async_client

    def append(self, session_id: str, payload: list[dict[str, Any]]) -> None:
        for start in range(0, len(payload), MAX_BATCH):
            batch = payload[start : start + MAX_BATCH]
            try:
                self.client.append_messages(session_id, batch)
            except SessionNotFoundError:
                with contextlib.suppress(SessionExistsError):
                    self.client.create_session(session_id, **self.session_options)
                self.client.append_messages(session_id, batch)

    async def aappend(self, session_id: str, payload: list[dict[str, Any]]) -> None:
        for start in range(0, len(payload), MAX_BATCH):
            batch = payload[start : start + MAX_BATCH]
            try:
                await self.async_client.append_messages(session_id, batch)
            except SessionNotFoundError:
                with contextlib.suppress(SessionExistsError):
                    await self.async_client.create_session(session_id, **self.session_options)
                await self.async_client.append_messages(session_id, batch)

    def turn(self, session_id: str, payload: list[dict[str, Any]]) -> list[BaseMessage]:
        """Stores `payload` and returns the context after it: the last batch and the context
        in one request (POST …/turn), any earlier batches appended before it."""
        last = _last_batch(payload)
        if last:
            self.append(session_id, payload[:last])
        try:
            taken = self.client.turn(session_id, payload[last:], **self.context_options)
        except SessionNotFoundError:
            with contextlib.suppress(SessionExistsError):
                self.client.create_session(session_id, **self.session_options)
            taken = self.client.turn(session_id, payload[last:], **self.context_options)
        return to_langchain(taken.context.messages)

    async def aturn(self, session_id: str, payload: list[dict[str, Any]]) -> list[BaseMessage]:
        last = _last_batch(payload)
        if last:
            await self.aappend(session_id, payload[:last])
        client = self.async_client
        try:
            taken = await client.turn(session_id, payload[last:], **self.context_options)
        except SessionNotFoundError:
            with contextlib.suppress(SessionExistsError):
                await client.create_session(session_id, **self.session_options)
            taken = await client.turn(session_id, payload[last:], **self.context_options)
        return to_langchain(taken.context.messages)

    def report_usage(self, session_id: str, tokens: int, unserved: Mapping[str, Any]) -> None:
        """Calibration is a bonus: a report that fails is logged, never raised."""
        model = self.context_options.get("model")
        try:
            self.client.report_usage(session_id, tokens, model=model, unserved=unserved)
        except FoldwiseError as error:
            logger.warning("usage report for session %r failed: %s", session_id, error)

    async def areport_usage(
        self, session_id: str, tokens: int, unserved: Mapping[str, Any]
    ) -> None:
        model = self.context_options.get("model")
        try:
            await self.async_client.report_usage(session_id, tokens, model=model, unserved=unserved)
        except FoldwiseError as error:
            logger.warning("usage report for session %r failed: %s", session_id, error)

    def context(self, session_id: str) -> list[BaseMessage]:
        try:
            ctx = self.client.context(session_id, **self.context_options)
        except SessionNotFoundError:
            return []
        return to_langchain(ctx.messages)

    async def acontext(self, session_id: str) -> list[BaseMessage]:
        try:
            ctx = await self.async_client.context(session_id, **self.context_options)
        except SessionNotFoundError:
            return []
        return to_langchain(ctx.messages)


class FoldwiseChatMessageHistory(BaseChatMessageHistory):
    """Chat history kept in a Foldwise session (for `RunnableWithMessageHistory` and the like).

    `messages` / `aget_messages()` return the context to send next: the system prompt with the
    summary of folded messages, then the recent messages, under the budget (`context_options`:
    `max_tokens`, `model`, any context setting). `clear()` starts a fresh context; the stored
    messages stay (`Foldwise.delete_session` removes them).
    """

    def __init__(self, session_id: str, **options: Unpack[AdapterOptions]) -> None:
        self.session_id = session_id
        self._sessions = _Sessions(options)

    @property
    def messages(self) -> list[BaseMessage]:  # type: ignore[override]  # a property by design
        return self._sessions.context(self.session_id)

    async def aget_messages(self) -> list[BaseMessage]:
        return await self._sessions.acontext(self.session_id)

    def add_messages(self, messages: Sequence[BaseMessage]) -> None:
        self._sessions.append(self.session_id, to_foldwise(messages))

    async def aadd_messages(self, messages: Sequence[BaseMessage]) -> None:
        await self._sessions.aappend(self.session_id, to_foldwise(messages))

    def clear(self) -> None:
        with contextlib.suppress(SessionNotFoundError):
            self._sessions.client.clear(self.session_id)

    async def aclear(self) -> None:
        with contextlib.suppress(SessionNotFoundError):
            await self._sessions.async_client.clear(self.session_id)


class FoldwiseHook:
    """LangGraph hooks for `create_react_agent(..., pre_model_hook=hook.pre_model_hook,
    post_model_hook=hook.post_model_hook)`.

    The session is `session_id`, else the run's `configurable.thread_id`. Before each model
    call the state's messages not yet stored are appended (by LangChain id: a message is never
    stored twice, also after a restart), and the model gets the session's context as
    `llm_input_messages`; the graph state keeps every message. Put the system prompt in the
    session (`session_options={"system_prompt": ...}`), not in `prompt=`: the summary of folded
    messages travels with it.
    """

    def __init__(self, session_id: str | None = None, **options: Unpack[AdapterOptions]) -> None:
        self.session_id = session_id
        self._sessions = _Sessions(options)
        self._stored: dict[str, set[str]] = {}
        self.pre_model_hook = RunnableLambda(
            self._pre, afunc=self._apre, name="foldwise_pre_model_hook"
        )
        self.post_model_hook = RunnableLambda(
            self._post, afunc=self._apost, name="foldwise_post_model_hook"
        )

    def _session(self, config: RunnableConfig | None) -> str:
        if self.session_id is not None:
            return self.session_id
        thread = ((config or {}).get("configurable") or {}).get("thread_id")
        if thread is None:
            raise ValueError("FoldwiseHook needs a session_id or a configurable thread_id")
        return str(thread)

    def _unstored(
        self, session_id: str, state: Mapping[str, Any]
    ) -> tuple[list[str], list[dict[str, Any]]]:
        """The ids of the state's messages this hook has not stored yet, and their payload
        (only those are converted: a long state costs an id lookup per message)."""
        stored = self._stored.setdefault(session_id, set())
        ids: list[str] = []
        payload: list[dict[str, Any]] = []
        for position, message in enumerate(state["messages"]):
            client_id = client_id_of(message, position)
            if client_id not in stored:
                ids.append(client_id)
                payload += to_foldwise([message], state_position=position)
        return ids, payload

    def store(self, state: Mapping[str, Any], config: RunnableConfig | None) -> str:
        """Appends the state's messages not stored yet; returns the session id."""
        session_id = self._session(config)
        ids, payload = self._unstored(session_id, state)
        if payload:
            self._sessions.append(session_id, payload)
        self._stored[session_id].update(ids)
        return session_id

    async def astore(self, state: Mapping[str, Any], config: RunnableConfig | None) -> str:
        session_id = self._session(config)
        ids, payload = self._unstored(session_id, state)
        if payload:
            await self._sessions.aappend(session_id, payload)
        self._stored[session_id].update(ids)
        return session_id

    def turn(
        self, state: Mapping[str, Any], config: RunnableConfig | None
    ) -> tuple[str, list[BaseMessage]]:
        """Stores the state's new messages and reads the context after them, in one request
        (POST …/turn) when there are new ones; returns the session id and the context."""
        session_id = self._session(config)
        ids, payload = self._unstored(session_id, state)
        sessions = self._sessions
        context = sessions.turn(session_id, payload) if payload else sessions.context(session_id)
        self._stored[session_id].update(ids)
        return session_id, context

    async def aturn(
        self, state: Mapping[str, Any], config: RunnableConfig | None
    ) -> tuple[str, list[BaseMessage]]:
        session_id = self._session(config)
        ids, payload = self._unstored(session_id, state)
        sessions = self._sessions
        if payload:
            context = await sessions.aturn(session_id, payload)
        else:
            context = await sessions.acontext(session_id)
        self._stored[session_id].update(ids)
        return session_id, context

    def context(self, session_id: str) -> list[BaseMessage]:
        """The session's folded context as LangChain messages ([] before the first store)."""
        return self._sessions.context(session_id)

    async def acontext(self, session_id: str) -> list[BaseMessage]:
        return await self._sessions.acontext(session_id)

    @property
    def sessions(self) -> _Sessions:
        """The clients and options this hook uses (for `FoldwiseMiddleware`)."""
        return self._sessions

    def _pre(self, state: Mapping[str, Any], config: RunnableConfig) -> dict[str, Any]:
        return {"llm_input_messages": self.turn(state, config)[1]}

    async def _apre(self, state: Mapping[str, Any], config: RunnableConfig) -> dict[str, Any]:
        return {"llm_input_messages": (await self.aturn(state, config))[1]}

    def _post(self, state: Mapping[str, Any], config: RunnableConfig) -> dict[str, Any]:
        self.store(state, config)
        return {}

    async def _apost(self, state: Mapping[str, Any], config: RunnableConfig) -> dict[str, Any]:
        await self.astore(state, config)
        return {}
