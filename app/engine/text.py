"""Plain-text views of messages, for pruning decisions and for summarizers."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from app.core.content import Block, Content
from app.engine.compaction import COMPACTION, summary_text
from app.engine.gemini_in import GEMINI_PART, GEMINI_THOUGHT
from app.engine.types import Message
from app.tokens.media.blocks import MEDIA_BLOCK_TYPES, media_ref

COMPACTION_NOTE = "Summary of the earlier conversation (compacted by the provider):"


def block_text(block: Block) -> str:
    """Readable text of one content block; unknown blocks give their JSON."""
    kind = block.get("type")
    reader = _READERS.get(kind) if isinstance(kind, str) else None
    text = reader(block) if reader is not None else None
    if text is not None:
        return text
    if isinstance(kind, str) and kind.endswith("_tool_result"):  # a provider-run tool's
        return _server_result_text(kind, block.get("content"))
    if kind in MEDIA_BLOCK_TYPES:  # never its base64: a reader (or a summarizer) sees a label
        ref = media_ref(block)
        kind = ref.kind if ref is not None else "file"
        return f"[{'document' if kind in ('pdf', 'text') else kind}]"
    return _json(block)


def _compaction_text(block: Block) -> str:
    """An Anthropic compaction's summary reads as one; a Responses item is opaque."""
    summary = summary_text(block)
    return f"{COMPACTION_NOTE}\n{summary}" if summary else ""


def _reasoning_text(block: Block) -> str:
    """A Responses reasoning item: its readable summary, not the blob."""
    summary = block.get("summary")
    parts = summary if isinstance(summary, list) else []
    return "\n".join(str(p.get("text", "")) for p in parts if isinstance(p, dict))


def _gemini_note(part: Any) -> str | None:
    """Gemini's code execution as a reader sees it; None for media (labelled as media)."""
    if not isinstance(part, dict):
        return None
    code, result = part.get("executableCode"), part.get("codeExecutionResult")
    if isinstance(code, dict):
        return f"[code ({str(code.get('language', '')).lower()})]\n{code.get('code', '')}"
    if isinstance(result, dict):
        return f"[code result: {result.get('outcome', '')}]\n{result.get('output', '')}"
    if "inlineData" in part or "fileData" in part:
        return None
    return _json(part)


def document_text(block: Block) -> str | None:
    """A text document's title and text (a faithful conversion of it), else None."""
    source = block.get("source")
    body: Any = None
    if isinstance(source, dict) and source.get("type") == "text":
        body = source.get("data")
    elif isinstance(source, dict) and source.get("type") == "content":
        body = content_text(source.get("content", ""))
    if not isinstance(body, str):
        return None
    title = block.get("title")
    return f"{title}\n\n{body}" if isinstance(title, str) and title else body


def _server_result_text(kind: str, content: Any) -> str:
    """A provider-run tool's result as a reader sees it: titles and URLs, never the
    `encrypted_content` the provider alone can read."""
    name = kind.removesuffix("_tool_result").replace("_", " ")
    if isinstance(content, list):
        lines = [
            " — ".join(str(r[k]) for k in ("title", "url") if isinstance(r.get(k), str))
            for r in content
            if isinstance(r, dict)
        ]
        return f"[{name} results]\n" + "\n".join(line for line in lines if line)
    if isinstance(content, dict):
        readable = {k: v for k, v in content.items() if not str(k).startswith("encrypted")}
        return f"[{name} result] {_json(readable)}"
    return f"[{name} result]"


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


# Block types with a reading of their own (None: read as media, or as JSON).
_READERS: dict[str, Callable[[Block], str | None]] = {
    "text": lambda b: str(b.get("text", "")),
    "tool_use": lambda b: f"{b.get('name', '')}({_json(b.get('input', {}))})",
    "tool_result": lambda b: content_text(b.get("content", "")),
    "document": lambda b: document_text(b) or "[document]",
    "image": lambda b: "[image]",
    # A provider-run tool call: what it was asked.
    "server_tool_use": lambda b: f"[{b.get('name', 'server tool')} {_json(b.get('input', {}))}]",
    COMPACTION: _compaction_text,
    GEMINI_THOUGHT: lambda b: str(b.get("part", {}).get("text", "")),
    GEMINI_PART: lambda b: _gemini_note(b.get("part")),
    "reasoning": _reasoning_text,
}
