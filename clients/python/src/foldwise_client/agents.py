"""OpenAI Agents SDK adapter (extra `[agents]`): `FoldwiseSession`, a `Session` whose history
is the Foldwise session's folded context, so `Runner.run(agent, ..., session=FoldwiseSession(...))`
gets compaction, tool-pair safety and prompt caching. The `Session` protocol's docstrings are
the contract (tests/pyclient/test_session_contract.py runs them next to `SQLiteSession`):

- `get_items(limit)` returns the context as Responses input items (`format=openai_responses`,
  `summary_placement=messages`: the summary of folded messages comes as a leading user /
  assistant pair, because the SDK sends the agent's own `instructions`; a system prompt set on
  the Foldwise session comes first as a `system` message item). `limit` (else
  `session_settings.limit`): the newest `limit` items; 0 none, a negative one all (as
  `SQLiteSession`).
- `add_items(items)` appends the items (each gets a `client_id`, so a retried append stores
  once); the server groups an assistant turn's reasoning, message and calls into one message.
- `pop_item()` removes and returns the newest item, None when there is none (an empty or
  cleared session). When the newest stored message held several items (an assistant turn with
  its calls), the others are appended again. A reasoning item right before the popped item
  goes with it: it only exists as that item's prelude, and no Responses backend takes it
  alone. Folded messages cannot be popped: a `ConflictError` (`message_summarized`) is raised
  then (the summary already holds them).
- `clear_session()` starts a fresh context (`POST …/clear`); stored messages stay for audit.

Lifetime: a session made without `client=` owns its `AsyncFoldwise`; `close()` or
`async with` releases its connections. It may be used from any event loop or thread, as
`AsyncFoldwise` may.
"""

from __future__ import annotations

import contextlib
from collections.abc import Mapping
from typing import Any, cast

from agents.items import TResponseInputItem
from agents.memory.session_settings import SessionSettings, resolve_session_limit

from foldwise_client._loops import AsyncClosable
from foldwise_client.agents_usage import FoldwiseUsageHooks
from foldwise_client.async_client import AsyncFoldwise
from foldwise_client.errors import (
    ConflictError,
    NoMessagesError,
    SessionExistsError,
    SessionNotFoundError,
)

REASONING = "reasoning"


class FoldwiseSession(AsyncClosable):
    """`session_options` create the Foldwise session when it does not exist yet (`model`,
    `system_prompt`, `tools`, `settings`, `metadata`); `context_options` go to each context
    request (`max_tokens`, `model`, any context setting)."""

    def __init__(
        self,
        session_id: str,
        *,
        client: AsyncFoldwise | None = None,
        session_options: Mapping[str, Any] | None = None,
        context_options: Mapping[str, Any] | None = None,
        session_settings: SessionSettings | None = None,
    ) -> None:
        self.session_id = session_id
        self.session_settings = session_settings
        self._owns_client = client is None
        self.client = client or AsyncFoldwise()
        self.session_options = dict(session_options or {})
        # How many items the last get_items served: the prefix of the model's input that the
        # server estimated (FoldwiseUsageHooks reports the rest as unserved).
        self.served_items = 0
        self.context_options: dict[str, Any] = {
            "summary_placement": "messages",
            **(context_options or {}),
            "format": "openai_responses",
        }

    async def close(self) -> None:
        """Closes the client this session made (a `client=` given to it stays open)."""
        if self._owns_client:
            await self.client.close()

    def usage_hooks(self) -> FoldwiseUsageHooks:
        """Run hooks that report each model call's input tokens for calibration:
        `Runner.run(agent, text, session=session, hooks=session.usage_hooks())`."""
        return FoldwiseUsageHooks(self)

    async def get_items(self, limit: int | None = None) -> list[TResponseInputItem]:
        limit = resolve_session_limit(limit, self.session_settings)
        self.served_items = 0
        if limit == 0:
            return []
        try:
            ctx = await self.client.context(self.session_id, **self.context_options)
        except SessionNotFoundError:
            return []
        items: list[dict[str, Any]] = list(ctx.messages)
        if isinstance(ctx.system, str) and ctx.system:
            system = {"type": "message", "role": "system", "content": ctx.system}
            items.insert(0, system)
        if limit is not None and limit > 0:
            items = items[-limit:]
        self.served_items = len(items)
        return cast(list[TResponseInputItem], items)

    async def add_items(self, items: list[TResponseInputItem]) -> None:
        if not items:
            return
        payload = [cast(Mapping[str, Any], item) for item in items]
        try:
            await self.client.append_messages(self.session_id, payload)
        except SessionNotFoundError:
            with contextlib.suppress(SessionExistsError):
                await self.client.create_session(self.session_id, **self.session_options)
            await self.client.append_messages(self.session_id, payload)

    async def pop_item(self) -> TResponseInputItem | None:
        items: list[dict[str, Any]] = []
        while not items:  # a stored message no item carries (an empty one) is skipped
            try:
                popped = await self.client.pop_message(self.session_id)
            except (NoMessagesError, SessionNotFoundError):
                return None
            except ConflictError as error:
                if error.code == "message_cleared":
                    return None  # all that is left is before the clear marker
                raise
            items = list(popped.get("items") or [])
        newest = items.pop()
        while items and items[-1].get("type") == REASONING:
            items.pop()
        if items:
            await self.client.append_messages(self.session_id, items)
        return cast(TResponseInputItem, newest)

    async def clear_session(self) -> None:
        with contextlib.suppress(SessionNotFoundError):
            await self.client.clear(self.session_id)
