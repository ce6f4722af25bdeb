"""Plain-text views of messages, for pruning decisions and for summarizers."""

from __future__ import annotations

import json
from typing import Any

from app.core.content import Block, Content
from app.engine.types import Message
from app.tokens.media.blocks import MEDIA_BLOCK_TYPES, media_ref


def block_text(block: Block) -> str:
    """Readable text of one content block; unknown blocks give their JSON."""
    kind = block.get("type")
    if kind == "text":
        return str(block.get("text", ""))
    if kind == "tool_use":
        return f"{block.get('name', '')}({_json(block.get('input', {}))})"
    if kind == "tool_result":
        return content_text(block.get("content", ""))
    if kind in ("image", "document"):
        return f"[{kind}]"
    if kind in MEDIA_BLOCK_TYPES:  # never its base64: a reader (or a summarizer) sees a label
        ref = media_ref(block)
        kind = ref.kind if ref is not None else "file"
        return f"[{'document' if kind in ('pdf', 'text') else kind}]"
    if kind == "reasoning":  # a Responses reasoning item: its readable summary, not the blob
        summary = block.get("summary")
        parts = summary if isinstance(summary, list) else []
        return "\n".join(str(p.get("text", "")) for p in parts if isinstance(p, dict))
    return _json(block)


def content_text(content: Content | Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(block_text(b) for b in content if isinstance(b, dict))
    return _json(content)


def message_text(message: Message) -> str:
    """Everything a reader of the transcript would see in this message, tool traffic included."""
    parts = [content_text(message.content)]
    for call in message.tool_calls or ():
        function = call.get("function", {})
        parts.append(f"{function.get('name', '')}({function.get('arguments', '')})")
    return "\n".join(p for p in parts if p)


def _json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, sort_keys=True, default=str)
