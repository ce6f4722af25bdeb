"""LangChain messages ↔ the OpenAI Chat shape Foldwise stores and serves (`format=openai`)."""

from __future__ import annotations

import hashlib
import json
import uuid
from collections.abc import Mapping, Sequence
from typing import Any

from langchain_core.messages import BaseMessage, convert_to_messages, convert_to_openai_messages


def client_id_of(message: BaseMessage, position: int) -> str:
    """The message's LangChain id (graphs give every message one), else a digest of its
    place in the graph state and its body, so the same message posted again is recognised."""
    if message.id:
        return str(message.id)
    body = json.dumps([position, message.type, message.content], sort_keys=True, default=str)
    return "lc-" + hashlib.sha256(body.encode()).hexdigest()[:40]


def to_foldwise(
    messages: Sequence[BaseMessage], state_position: int | None = None
) -> list[dict[str, Any]]:
    """Chat-shaped dicts with the LangChain id as `client_id` (a second part of one message
    gets `:n`). An id-less message gets a digest id only at a known `state_position` (a graph
    state); elsewhere the client gives it a new UUID, so "yes" said twice is stored twice."""
    out: list[dict[str, Any]] = []
    for offset, message in enumerate(messages):
        if message.id or state_position is not None:
            client_id = client_id_of(message, (state_position or 0) + offset)
        else:
            client_id = str(uuid.uuid4())
        converted = convert_to_openai_messages([message])
        for part, payload in enumerate(converted):
            suffix = f":{part}" if part else ""
            entry = {k: v for k, v in payload.items() if v is not None}
            if entry.get("role") == "assistant" and entry.get("tool_calls"):
                entry.setdefault("content", "")
            out.append({**entry, "client_id": client_id + suffix})
    return out


def to_langchain(messages: Sequence[Mapping[str, Any]]) -> list[BaseMessage]:
    """A served context (`format=openai`) as LangChain messages."""
    # An assistant turn of only tool calls has `content: null` in Chat; LangChain wants text.
    cleaned = [{**m, "content": "" if m.get("content") is None else m["content"]} for m in messages]
    return convert_to_messages(cleaned)
