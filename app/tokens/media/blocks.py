"""Which content blocks are media, and where their bytes are.

Shapes read (as clients post them, stored verbatim):
- Anthropic `image` and `document` blocks: `source` of type `base64`, `url`, `file`, and for
  documents also `text` (a plain-text document) and `content` (a document of text blocks);
- OpenAI Chat Completions parts: `image_url` (a data URI or a URL, with `detail`),
  `input_audio` (`data`, `format`), `file` (`file_data` data URI, or `file_id`);
- OpenAI Responses parts kept as posted: `input_image`, `input_file`;
- Gemini media kept as posted (`gemini` blocks: audio, video, uploaded files): `inlineData`
  (`mimeType`, `data`) or `fileData` (`mimeType`, `fileUri`) of the part.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any, Literal

MEDIA_BLOCK_TYPES = frozenset(
    {"image", "document", "image_url", "input_image", "input_audio", "file", "input_file", "gemini"}
)
# A data URI's `data:<media type>;base64,` is looked for this far in.
MAX_DATA_HEADER = 256
MediaKind = Literal["image", "pdf", "text", "audio", "file"]
Detail = Literal["low", "high", "auto"]


@dataclass(frozen=True, slots=True)
class MediaRef:
    """One media block: its kind, and its base64 `data`, its `text`, or a `reference`."""

    kind: MediaKind
    media_type: str | None = None
    data: str | None = None
    """Base64 bytes the service holds."""
    text: str | None = None
    """A plain-text document's text (title and context included)."""
    reference: str | None = None
    """A URL or file id whose bytes the service does not hold."""
    detail: Detail = "auto"

    def describe(self) -> str:
        what = {"pdf": "PDF", "text": "Text document"}.get(self.kind, self.kind.capitalize())
        return f"{what} ({self.media_type})" if self.media_type else what


def media_blocks(content: Any, path: str = "content") -> Iterator[tuple[str, Mapping[str, Any]]]:
    """Every media block of a message body with its path, those inside tool results too."""
    if not isinstance(content, list):
        return
    for index, block in enumerate(content):
        if not isinstance(block, Mapping):
            continue
        kind = block.get("type")
        if kind in MEDIA_BLOCK_TYPES and (kind != "gemini" or _gemini(block.get("part"))):
            yield f"{path}[{index}]", block
        elif kind == "tool_result":
            yield from media_blocks(block.get("content"), f"{path}[{index}].content")


def has_media(content: Any) -> bool:
    """Whether a message body holds any media block (a string never does)."""
    return isinstance(content, list) and next(media_blocks(content), None) is not None


def media_ref(block: Mapping[str, Any]) -> MediaRef | None:
    """The media `block` carries, or None when it is not a media block this module reads."""
    kind = block.get("type")
    if kind in ("image", "document"):
        return _anthropic(block, kind)
    if kind in ("image_url", "input_image"):
        image = block.get("image_url")
        url = image.get("url") if isinstance(image, Mapping) else image
        detail = (image if isinstance(image, Mapping) else block).get("detail")
        if not isinstance(url, str):
            file_id = block.get("file_id")
            return MediaRef("image", reference=str(file_id or "(no url)"), detail=_detail(detail))
        return _from_uri("image", url, _detail(detail))
    if kind == "input_audio":
        audio = block.get("input_audio", block)
        audio = audio if isinstance(audio, Mapping) else {}
        data, fmt = audio.get("data"), audio.get("format")
        media_type = f"audio/{fmt}" if isinstance(fmt, str) else None
        if isinstance(data, str):
            return MediaRef("audio", media_type, data=data)
        return MediaRef("audio", media_type, reference="(no data)")
    if kind in ("file", "input_file"):
        file = block.get("file", block)
        return _file(file if isinstance(file, Mapping) else {})
    if kind == "gemini":
        return _gemini(block.get("part"))
    return None


def _gemini(part: Any) -> MediaRef | None:
    """A Gemini part's media, or None (code execution and other parts are not media)."""
    if not isinstance(part, Mapping):
        return None
    media = part.get("inlineData", part.get("fileData"))
    if not isinstance(media, Mapping):
        return None
    mime = media.get("mimeType")
    mime = mime if isinstance(mime, str) else None
    kind: MediaKind = "file"
    if mime and mime.startswith(("image/", "audio/")):
        kind = "image" if mime.startswith("image/") else "audio"
    elif mime == "application/pdf":
        kind = "pdf"
    if isinstance(media.get("data"), str):
        return MediaRef(kind, mime, data=media["data"])
    return MediaRef(kind, mime, reference=str(media.get("fileUri", "(no data)"))[:200])


def _anthropic(block: Mapping[str, Any], kind: str) -> MediaRef | None:
    source = block.get("source")
    if not isinstance(source, Mapping):
        return None
    source_type = source.get("type")
    media_type = source.get("media_type")
    media_type = media_type if isinstance(media_type, str) else None
    if source_type == "base64" and isinstance(source.get("data"), str):
        is_image = kind == "image" or (media_type or "").startswith("image/")
        return MediaRef("image" if is_image else "pdf", media_type, data=source["data"])
    if kind == "document" and source_type in ("text", "content"):
        body = source.get("data") if source_type == "text" else source.get("content")
        return MediaRef("text", media_type or "text/plain", text=_document_text(block, body))
    reference = source.get("url") or source.get("file_id")
    return MediaRef("image" if kind == "image" else "pdf", media_type, reference=str(reference))


def _document_text(block: Mapping[str, Any], body: Any) -> str:
    if isinstance(body, list):
        body = "\n".join(
            str(b.get("text", "")) for b in body if isinstance(b, Mapping) and "text" in b
        )
    parts = [block.get("title"), block.get("context"), body]
    return "\n".join(str(p) for p in parts if isinstance(p, str) and p)


def _file(file: Mapping[str, Any]) -> MediaRef:
    data = file.get("file_data")
    if isinstance(data, str):
        ref = _from_uri("file", data, "auto")
        return ref if ref.data is None or ref.media_type != "application/pdf" else _as_pdf(ref)
    url = file.get("file_url")
    return MediaRef("file", reference=str(file.get("file_id") or url or "(no data)"))


def _as_pdf(ref: MediaRef) -> MediaRef:
    return MediaRef("pdf", ref.media_type, data=ref.data)


def _from_uri(kind: MediaKind, url: str, detail: Detail) -> MediaRef:
    """A data URI's media type and base64, or a reference to a URL."""
    comma = url.find(",", 0, MAX_DATA_HEADER) if url.startswith("data:") else -1
    if comma > 0 and url[5:comma].endswith(";base64"):  # the data copied once
        media_type = url[5 : comma - len(";base64")] or None
        return MediaRef(kind, media_type, data=url[comma + 1 :], detail=detail)
    return MediaRef(kind, reference=url[:200], detail=detail)


def _detail(value: Any) -> Detail:
    return value if value in ("low", "high") else "auto"
