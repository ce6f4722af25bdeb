"""OpenAI Agents SDK adapter (extra `[agents]`): `FoldwiseSession`, a `Session` whose history
is the Foldwise session's folded context, so `Runner.run(agent, ..., session=FoldwiseSession(...))`
gets compaction, tool-pair safety and prompt caching.

- `get_items(limit)` returns the context as Responses input items (`format=openai_responses`,
  `summary_placement=messages`: the summary of folded messages comes as a leading user /
  assistant pair, because the SDK sends the agent's own `instructions`; a system prompt set on
  the Foldwise session comes first as a `system` message item). With `limit`, the newest
  `limit` items.
- `add_items(items)` appends the items (each gets a `client_id`, so a retried append stores
  once); the server groups an assistant turn's reasoning, message and calls into one message.
- `pop_item()` removes the newest stored message. When it held several items (an assistant turn
  with its calls), the last item is returned and the others are appended again, so the session
  ends exactly one item shorter, as the protocol says. Folded messages cannot be popped: a
  `ConflictError` is raised then (the summary already holds them).
- `clear_session()` starts a fresh context (`POST …/clear`); stored messages stay for audit.
"""

from __future__ import annotations

import contextlib
from collections.abc import Mapping
from typing import Any, cast

from agents.items import TResponseInputItem
from agents.memory.session_settings import SessionSettings

from foldwise_client.async_client import AsyncFoldwise
from foldwise_client.errors import NoMessagesError, SessionExistsError, SessionNotFoundError


class FoldwiseSession:
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
        self.client = client or AsyncFoldwise()
        self.session_options = dict(session_options or {})
        self.context_options: dict[str, Any] = {
            "summary_placement": "messages",
            **(context_options or {}),
            "format": "openai_responses",
        }

    async def get_items(self, limit: int | None = None) -> list[TResponseInputItem]:
        try:
            ctx = await self.client.context(self.session_id, **self.context_options)
        except SessionNotFoundError:
            return []
        items: list[dict[str, Any]] = list(ctx.messages)
        if isinstance(ctx.system, str) and ctx.system:
            system = {"type": "message", "role": "system", "content": ctx.system}
            items.insert(0, system)
        if limit is not None:
            items = items[-limit:] if limit > 0 else []
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
        try:
            popped = await self.client.pop_message(self.session_id)
        except (NoMessagesError, SessionNotFoundError):
            return None
        items = popped.get("items") or []
        if not items:
            return None
        if len(items) > 1:
            await self.client.append_messages(self.session_id, items[:-1])
        return cast(TResponseInputItem, items[-1])

    async def clear_session(self) -> None:
        with contextlib.suppress(SessionNotFoundError):
            await self.client.clear(self.session_id)
