"""The TokenCounter seam: engines and summarizers receive one, tests may pass a fake.

One method per thing counted — text, a message body, a whole message, tool definitions, an
image — so the routes, the CLI and the engine count the same input the same way
(docs/reference.md §Token counting).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from app.core.content import Content
from app.tokens.media import MediaCount


class MessageFields(Protocol):
    """What a message's count depends on (a stored, posted or synthetic message)."""

    @property
    def role(self) -> str: ...
    @property
    def content(self) -> Content | None: ...
    @property
    def name(self) -> str | None: ...
    @property
    def tool_calls(self) -> Sequence[Mapping[str, Any]] | None: ...
    @property
    def tool_call_id(self) -> str | None: ...


@dataclass(frozen=True, slots=True)
class BareMessage:
    """A message that is only counted (a system prompt sent as a message, a test input)."""

    role: str
    content: Content | None
    name: str | None = None
    tool_calls: Sequence[Mapping[str, Any]] | None = None
    tool_call_id: str | None = None


class TokenCounter(Protocol):
    def count_text(self, text: str) -> int: ...

    def count_content(self, content: Content) -> int:
        """Tokens of a message body (string or blocks), including per-block overhead."""
        ...

    def count_message(self, message: MessageFields) -> int:
        """Tokens of one whole message: body, framing, role, name and tool traffic."""
        ...

    def count_tools(self, tools: Sequence[Mapping[str, Any]]) -> int:
        """Tokens of tool definitions as sent."""
        ...

    def count_media(self, block: Mapping[str, Any]) -> MediaCount | None:
        """An image, document or audio block as its provider bills it; None if not media."""
        ...
