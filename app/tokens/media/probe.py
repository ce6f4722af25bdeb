"""What a media file holds, read from its own bytes: an image's pixel size from its header, a
PDF's pages (size and text), an audio clip's duration. Never its byte length.

Each reader is bounded, whatever the input claims:
- images: Pillow reads the header only (`Image.open` decodes no pixels), so a header that
  claims 10 billion pixels costs what a small one does;
- PDFs: pdfium (via pypdfium2) reads at most PDF_MAX_PAGES pages and spends at most
  PDF_TIME_BUDGET_S on their text; a page the file claims but cannot load ends the count;
- audio: mutagen reads the stream headers for the duration.
Anything unreadable is a `Probe` with `error` set: counting never raises (app/tokens/media).
"""

from __future__ import annotations

import binascii
import io
import threading
import time
from dataclasses import dataclass
from struct import error as struct_error
from typing import Literal

import mutagen
import pypdfium2
from PIL import Image, UnidentifiedImageError

from app.core.lru import TextKeyedLRU

IMAGE_FORMATS = ("PNG", "JPEG", "GIF", "WEBP")
"""The formats every provider we count takes; other formats get the rule's default."""
# A JPEG's size marker may follow a large EXIF block: the header is read from this much of the
# data first, and from all of it only when that was not enough.
IMAGE_HEADER_CHARS = 64 * 1024
PDF_MAX_PAGES = 1000
PDF_TIME_BUDGET_S = 2.0
# Text kept per PDF page for counting: more than any page holds in practice (a dense page is
# ~5,000 characters); a page past it is counted at this length.
PDF_PAGE_MAX_CHARS = 100_000
# PDF and audio probes remembered, bounded by the characters of their data.
CACHE_MAX_CHARS = 64_000_000

# pdfium is not thread-safe: one document is read at a time in this process.
_PDFIUM = threading.Lock()
# Pillow's decompression-bomb check guards decoding, which this process never does (Pillow is
# used for headers only): off, so a header's size is read whatever it claims.
Image.MAX_IMAGE_PIXELS = None

Kind = Literal["image", "pdf", "audio"]


@dataclass(frozen=True, slots=True)
class Page:
    width_pt: float
    height_pt: float
    text: str


@dataclass(frozen=True, slots=True)
class Probe:
    """What one media file holds; `error` says why it could not be read."""

    kind: Kind
    format: str | None = None
    width: int = 0
    height: int = 0
    pages: tuple[Page, ...] = ()
    pages_claimed: int = 0
    """Pages the document says it has (may exceed those read: the rest were not reachable)."""
    seconds: float = 0.0
    error: str | None = None
    note: str | None = None
    """Something the count could not see exactly (pages past the limits)."""


def decode_base64(data: str, limit: int | None = None) -> bytes:
    """The bytes of `data` (or of its first `limit` characters, cut to whole base64 groups);
    ValueError if it is not base64. MIME-style base64 (a line break every 76 characters) is
    common and accepted."""
    partial = limit is not None and len(data) > limit
    text = data[:limit] if partial else data
    error: binascii.Error | None = None
    for candidate in (text, "".join(text.split())):
        if partial:
            candidate = candidate[: len(candidate) - len(candidate) % 4]
        try:
            return binascii.a2b_base64(candidate, strict_mode=True)
        except binascii.Error as exc:
            error = exc
    raise ValueError(f"its data is not base64 ({error})")


def probe_image(data: str) -> Probe:
    """The pixel size of the base64 image `data`, from its header."""
    try:
        head = decode_base64(data, IMAGE_HEADER_CHARS)
        try:
            return _image_size(head)
        except _Truncated:
            if len(data) <= IMAGE_HEADER_CHARS:
                raise
            return _image_size(decode_base64(data))
    except ValueError as exc:
        return Probe("image", error=str(exc))
    except _Truncated:
        return Probe("image", error="its header is truncated")


class _Truncated(Exception):
    pass


def _image_size(raw: bytes) -> Probe:
    try:
        with Image.open(io.BytesIO(raw), formats=IMAGE_FORMATS) as image:
            width, height = image.size
            fmt = image.format
    except UnidentifiedImageError:
        raise ValueError(f"it is not a readable {', '.join(IMAGE_FORMATS)} image") from None
    except (OSError, SyntaxError, EOFError, ValueError, struct_error) as exc:  # short header
        raise _Truncated(str(exc)) from None
    if width <= 0 or height <= 0:
        raise ValueError(f"its header gives an empty size ({width}×{height})")
    return Probe("image", format=fmt, width=width, height=height)


def probe_pdf(data: str) -> Probe:
    """The pages of the base64 PDF `data`: each page's size and text, within the bounds."""
    try:
        raw = decode_base64(data)
    except ValueError as exc:
        return Probe("pdf", error=str(exc))
    with _PDFIUM:
        try:
            document = pypdfium2.PdfDocument(raw)
        except pypdfium2.PdfiumError as exc:
            return Probe("pdf", error=f"it cannot be opened as a PDF ({exc})")
        try:
            return _pages(document)
        finally:
            document.close()


def _pages(document: pypdfium2.PdfDocument) -> Probe:
    claimed = len(document)
    pages: list[Page] = []
    deadline = time.monotonic() + PDF_TIME_BUDGET_S
    note = None
    for index in range(min(claimed, PDF_MAX_PAGES)):
        if time.monotonic() > deadline:
            note = f"read {index} of its {claimed} pages in the time allowed"
            break
        try:
            page = document[index]
        except pypdfium2.PdfiumError:
            note = f"it claims {claimed} pages; {index} could be loaded"
            claimed = index
            break
        try:
            width, height = page.get_size()
            textpage = page.get_textpage()
            try:
                text = textpage.get_text_range()[:PDF_PAGE_MAX_CHARS]
            finally:
                textpage.close()
        finally:
            page.close()
        pages.append(Page(width, height, text))
    if note is None and claimed > PDF_MAX_PAGES:
        note = f"read the first {PDF_MAX_PAGES} of its {claimed} pages"
    return Probe("pdf", format="PDF", pages=tuple(pages), pages_claimed=claimed, note=note)


def probe_audio(data: str) -> Probe:
    """The duration of the base64 audio clip `data`, from its stream headers."""
    try:
        raw = decode_base64(data)
    except ValueError as exc:
        return Probe("audio", error=str(exc))
    try:
        audio = mutagen.File(io.BytesIO(raw))
    except Exception as exc:  # mutagen raises its own and struct errors on malformed headers
        return Probe("audio", error=f"its headers cannot be read ({type(exc).__name__})")
    length = getattr(getattr(audio, "info", None), "length", None)
    if not isinstance(length, int | float) or not length >= 0 or length == float("inf"):
        return Probe("audio", error="it is not a readable audio file")
    return Probe("audio", format=type(audio).__name__, seconds=float(length))


class ProbeCache:
    """PDF and audio probes remembered by their data (a stateless client re-posts the same
    history every turn). Images are not: their header is read from the first 64 KiB, faster
    than hashing the whole data for a lookup."""

    def __init__(self, max_chars: int = CACHE_MAX_CHARS) -> None:
        self._probes: TextKeyedLRU[tuple[Kind, str], Probe] = TextKeyedLRU(max_chars)

    def get(self, kind: Kind, data: str) -> Probe:
        if kind == "image":
            return probe_image(data)
        probe = self._probes.get((kind, data))
        if probe is None:
            probe = _PROBES[kind](data)  # outside the lock: pdfium and mutagen are slow
            self._probes.put((kind, data), probe, len(data))
        return probe

    def clear(self) -> None:
        self._probes.clear()


_PROBES = {"pdf": probe_pdf, "audio": probe_audio}
PROBES = ProbeCache()
"""The process's probe cache (shared by every counter)."""
