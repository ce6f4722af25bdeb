"""Plain data shared by the engine, the summarizers and the services."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

Role = Literal["user", "assistant", "system", "tool"]
Block = dict[str, Any]
Content = str | list[Block]


@dataclass(frozen=True, slots=True)
class Message:
    """A validated message exactly as the client posted it (Anthropic or OpenAI shape).

    `tokens` is the count stored at append time (content + per-message overhead).
    Stateless routes build these with id = str(index) and seq = index + 1.
    """

    id: str
    seq: int
    role: Role
    content: Content
    tokens: int
    name: str | None = None
    tool_calls: Sequence[Mapping[str, Any]] | None = None  # OpenAI assistant tool calls
    tool_call_id: str | None = None  # OpenAI role=tool result
    metadata: Mapping[str, Any] = field(default_factory=dict)
    overhead: int | None = None
    """Tokens beyond the body (framing, role, name, tool traffic), set only where `tokens` is
    a floor rather than the count (app/services/stateless_counts.py); `units.rebuild` uses it
    to count a changed body exactly without counting the original one."""

    @property
    def call_ids(self) -> tuple[str, ...]:
        """Ids of the tool calls this message makes (OpenAI tool_calls or Anthropic tool_use)."""
        ids = [str(call.get("id")) for call in self.tool_calls or () if call.get("id")]
        if isinstance(self.content, list):
            ids += [str(b["id"]) for b in self.content if b.get("type") == "tool_use" and "id" in b]
        return tuple(ids)

    @property
    def result_ids(self) -> tuple[str, ...]:
        """Ids of the tool calls this message answers (OpenAI tool_call_id or tool_result)."""
        ids = [self.tool_call_id] if self.tool_call_id else []
        if isinstance(self.content, list):
            ids += [
                str(b["tool_use_id"])
                for b in self.content
                if b.get("type") == "tool_result" and "tool_use_id" in b
            ]
        return tuple(ids)
