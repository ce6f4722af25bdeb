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
- `gemini`: text, images, PDFs and audio as `inlineData` (base64) or `fileData` (a URL); a
  text document → its title and text; a file by id → placeholder. Parts a Gemini client
  posted (`gemini` blocks: other media, code execution) go back as posted, and elsewhere are
  placeholders or readable notes;
- every format but `anthropic`: provider-run tool blocks (`server_tool_use`,
  `…_tool_result`) → a readable note, never their `encrypted_content` (text.py).

`to_anthropic`, `to_chat` and `to_responses` are the one decision of what a format carries
(render.py and responses.py send what they return, `format_warnings` warns where they return
None); placeholders and notes come from `text.block_text`.
"""

from __future__ import annotations

import mimetypes
from collections.abc import Mapping, Sequence
from typing import Any

from app.core.content import Block
from app.engine.entries import image_url
from app.engine.gemini_in import GEMINI_KEY, GEMINI_PART, GEMINI_THOUGHT, part_extras
from app.engine.text import block_text, document_text
from app.engine.types import Message
from app.tokens.media.blocks import media_blocks, media_ref

PDF = "application/pdf"
DEFAULT_FILENAME = "document.pdf"
# Media parts Chat Completions takes in a user message as they are stored.
CHAT_MEDIA_PARTS = frozenset({"image_url", "input_audio", "file"})
# `detail` is required on an input_image part; "auto" is the API's documented default.
DEFAULT_IMAGE_DETAIL = "auto"


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
    """The Anthropic form of a user-turn block, or None when it has none (a placeholder)."""
    kind = block.get("type")
    if kind == "image_url":
        url = _url(block)
        if url.startswith("data:") and ";base64," in url:
            media_type, data = url[len("data:") :].split(";base64,", 1)
            source = {"type": "base64", "media_type": media_type, "data": data}
            return {"type": "image", "source": source}
        return {"type": "image", "source": {"type": "url", "url": url}}
    if kind == "file" and (pdf := _pdf_data(block)) is not None:
        source = {"type": "base64", "media_type": PDF, "data": pdf}
        return {"type": "document", "source": source, "title": _filename(block)}
    return None if kind in ("file", "input_audio", GEMINI_PART) else block


def to_chat(block: Block) -> Block | None:
    """The Chat user part of a block, or None when Chat has none (a placeholder)."""
    kind = block.get("type")
    if kind in CHAT_MEDIA_PARTS:
        return dict(block)
    if kind == "text":
        return {"type": "text", "text": str(block.get("text", ""))}
    if kind == "image":
        url = image_url(block)
        return {"type": "image_url", "image_url": {"url": url}} if url else None
    if kind == "document" and (data := _pdf_data(block)) is not None:
        file = {"file_data": f"data:{PDF};base64,{data}", "filename": _filename(block)}
        return {"type": "file", "file": file}
    if kind == "document" and (text := document_text(block)) is not None:
        return {"type": "text", "text": text}
    return None


def to_responses(block: Block) -> Block | None:
    """The Responses input part of a block, or None when it has none (a placeholder)."""
    kind = block.get("type")
    if kind == "text":
        return {"type": "input_text", "text": str(block.get("text", ""))}
    if kind == "image_url":
        image = block.get("image_url")
        detail = image.get("detail") if isinstance(image, Mapping) else None
        return {
            "type": "input_image",
            "image_url": _url(block),
            "detail": detail or DEFAULT_IMAGE_DETAIL,
        }
    if kind == "image":
        url = image_url(block)
        return (
            {"type": "input_image", "image_url": url, "detail": DEFAULT_IMAGE_DETAIL}
            if url
            else None
        )
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
    if kind == "document" and (text := document_text(block)) is not None:
        return {"type": "input_text", "text": text}
    return None


def to_gemini(block: Block) -> dict[str, Any] | None:
    """The Gemini part of a user-turn block, or None when Gemini has none (a placeholder)."""
    kind = block.get("type")
    gemini = block.get(GEMINI_KEY)
    if kind in (GEMINI_PART, GEMINI_THOUGHT):  # posted by a Gemini client: as posted
        return dict(block["part"])
    if kind == "text":
        return {"text": str(block.get("text", "")), **part_extras(gemini)}
    if kind == "document" and (text := document_text(block)) is not None:
        return {"text": text}
    ref = media_ref(block)
    if ref is None or (ref.data is None and kind in ("file", "input_audio")):
        return None
    mime = ref.media_type or (gemini or {}).get("mimeType") or _guessed(ref.reference)
    if ref.kind == "pdf":
        mime = PDF
    if ref.data is not None and mime:
        return {"inlineData": {"mimeType": mime, "data": ref.data}, **part_extras(gemini)}
    if ref.reference and ref.reference.startswith(("http://", "https://")) and mime:
        return {"fileData": {"mimeType": mime, "fileUri": ref.reference}, **part_extras(gemini)}
    return None


def _guessed(url: str | None) -> str | None:
    return mimetypes.guess_type(url.split("?", 1)[0])[0] if url else None


def _url(block: Block) -> str:
    image = block.get("image_url")
    return str(image.get("url", "")) if isinstance(image, Mapping) else ""


def placeholder(block: Block, kind: str = "text") -> Block:
    """A text part (of `kind`) in place of a block the format cannot carry: its label, or
    for a block that is not media, its JSON."""
    return {"type": kind, "text": block_text(block) or f"[{block.get('type')}]"}


CONVERT = {
    "anthropic": to_anthropic,
    "openai": to_chat,
    "openai_responses": to_responses,
    "gemini": to_gemini,
}


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
