"""Every part valid where it is sent (SPEC §13): a block a format cannot carry as stored is
converted where a faithful conversion exists, else sent as a labelled placeholder, and the
context says so in `warnings`. By format (user turns; README, "what each shape cannot
carry"):

- `anthropic`: a Chat `file` with a PDF → a `document` (base64); a Chat `input_audio`, or a
  `file` of other data or by id → placeholder;
- `openai` (Chat): a `document` holding a PDF → a `file` part (data URI); a text document →
  its title and text; a document by URL or file id → placeholder;
- `openai_responses`: a `document` holding a PDF or a Chat `file` → `input_file`; a document
  by URL → `input_file` by URL; a text document → its title and text; `input_audio` →
  placeholder;
- every format but `anthropic`: provider-run tool blocks (`server_tool_use`,
  `…_tool_result`) → a readable note, never their `encrypted_content` (text.py).

Placeholders and notes come from `text.block_text`; `format_warnings` names every block that
goes as a placeholder.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from app.core.content import Block
from app.engine.text import block_text
from app.engine.types import Message
from app.tokens.media.blocks import media_blocks, media_ref

PDF = "application/pdf"
DEFAULT_FILENAME = "document.pdf"


def _pdf_data(block: Mapping[str, Any]) -> str | None:
    """The base64 of the PDF a `document` or Chat `file` block holds, or None."""
    ref = media_ref(block)
    if ref is None or ref.kind != "pdf" or ref.data is None:
        return None
    return ref.data


def _filename(block: Mapping[str, Any]) -> str:
    file = block.get("file")
    name = file.get("filename") if isinstance(file, Mapping) else block.get("title")
    return name if isinstance(name, str) and name else DEFAULT_FILENAME


def to_anthropic(block: Block) -> Block | None:
    """The Anthropic block for a Chat media part, or None when it has none (a placeholder)."""
    kind = block.get("type")
    if kind == "file" and (data := _pdf_data(block)) is not None:
        source = {"type": "base64", "media_type": PDF, "data": data}
        return {"type": "document", "source": source, "title": _filename(block)}
    return None if kind in ("file", "input_audio") else block


def _as_text(block: Block, kind: str) -> Block | None:
    """A text document as a text part of `kind` (its title and text), else None."""
    text = block_text(block)
    return None if text == "[document]" else {"type": kind, "text": text}


def to_chat(block: Block) -> Block | None:
    """The Chat user part for an Anthropic document, or None when it has none."""
    if block.get("type") != "document":
        return block
    if (data := _pdf_data(block)) is not None:
        file = {"file_data": f"data:{PDF};base64,{data}", "filename": _filename(block)}
        return {"type": "file", "file": file}
    return _as_text(block, "text")


def to_responses(block: Block) -> Block | None:
    """The Responses input part for a document or Chat file part, or None when it has none."""
    kind = block.get("type")
    if kind == "file" and isinstance(file := block.get("file"), Mapping):
        keys = ("file_data", "file_id", "filename")
        part = {k: file[k] for k in keys if isinstance(file.get(k), str)}
        return {"type": "input_file", **part} if part else None
    if kind == "document" and (data := _pdf_data(block)) is not None:
        data_uri = f"data:{PDF};base64,{data}"
        return {"type": "input_file", "file_data": data_uri, "filename": _filename(block)}
    source = block.get("source")
    if kind == "document" and isinstance(source, Mapping) and source.get("type") == "url":
        return {"type": "input_file", "file_url": str(source.get("url", ""))}
    if kind == "document":
        return _as_text(block, "input_text")
    return None if kind == "input_audio" else block


def placeholder(block: Block) -> Block:
    """A text part in place of a block the format cannot carry."""
    return {"type": "text", "text": block_text(block) or f"[{block.get('type')}]"}


CONVERT = {"anthropic": to_anthropic, "openai": to_chat, "openai_responses": to_responses}


def format_warnings(messages: Sequence[Message], fmt: str) -> list[str]:
    """One warning per media block of `messages` that `fmt` gets as a placeholder (inside a
    tool result, only `anthropic` carries an image or a document)."""
    convert = CONVERT.get(fmt)
    if convert is None:  # raw: as stored
        return []
    warnings = []
    for message in messages:
        if isinstance(message.content, str):
            continue
        for path, block in media_blocks(message.content):
            kind = block.get("type")
            if ".content[" in path.split("]", 1)[1]:  # inside a tool result
                carried = fmt == "anthropic" and kind in ("image", "document")
            else:
                carried = convert(dict(block)) is not None
            if not carried:
                what = block_text(dict(block)).strip("[]")
                warnings.append(
                    f"message {message.id}: {what} ({kind}) cannot be sent in format={fmt}: "
                    "sent as a placeholder"
                )
    return warnings
