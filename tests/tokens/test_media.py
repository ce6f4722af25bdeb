"""Media counted as each provider bills it: images from their pixel size (any format, any
encoding of the same pixels), PDFs by their pages, audio by its duration; hostile media cost
bounded time and get a clear default with a warning."""

from __future__ import annotations

import math
import struct
import time
import zlib
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from app.core.settings import Settings
from app.tokens.counter import TiktokenCounter, counter_for
from app.tokens.media import MediaCount
from app.tokens.media.rules import media_rules
from app.tokens.registry import load_registry
from tests.support.media import (
    MEDIA_TYPES,
    anthropic_image,
    anthropic_pdf,
    b64,
    image_bytes,
    openai_image,
    pdf_bytes,
    wav_bytes,
)

REGISTRY = load_registry(Settings())


def counter(model: str) -> TiktokenCounter:
    return counter_for(REGISTRY.get(model))


def count(model: str, block: dict[str, Any]) -> MediaCount:
    result = counter(model).count_media(block)
    assert result is not None
    return result


# The providers' rules as their pages state them, written out independently of app/.
def claude_published(width: int, height: int, long_edge: int, max_tokens: int) -> float:
    scale = min(1.0, long_edge / max(width, height), math.sqrt(max_tokens * 750 / (width * height)))
    return (width * scale) * (height * scale) / 750


def openai_tiles_published(width: int, height: int, base: int, tile: int) -> float:
    w, h = float(width), float(height)
    if max(w, h) > 2048:
        w, h = w * 2048 / max(w, h), h * 2048 / max(w, h)
    if min(w, h) > 768:
        w, h = w * 768 / min(w, h), h * 768 / min(w, h)
    return base + tile * math.ceil(w / 512) * math.ceil(h / 512)


def openai_patches_published(width: int, height: int, multiplier: float) -> float:
    patches = math.ceil(width / 32) * math.ceil(height / 32)
    if patches > 1536:
        r = math.sqrt(32 * 32 * 1536 / (width * height))
        r *= min(
            math.floor(width * r / 32) / (width * r / 32),
            math.floor(height * r / 32) / (height * r / 32),
        )
        patches = min(1536, math.ceil(width * r / 32) * math.ceil(height * r / 32))
    return patches * multiplier


# model → (published rule, what `detail` it is sent with)
PUBLISHED = {
    "claude-sonnet-4-6": lambda w, h: claude_published(w, h, 1568, 1600),
    "claude-haiku-4-5": lambda w, h: claude_published(w, h, 1568, 1600),
    "claude-opus-4-8": lambda w, h: claude_published(w, h, 2576, 4784),  # newer: family rules
    "gpt-4o": lambda w, h: openai_tiles_published(w, h, 85, 170),
    "gpt-4.1": lambda w, h: openai_tiles_published(w, h, 85, 170),
    "gpt-4o-mini": lambda w, h: openai_tiles_published(w, h, 2833, 5667),
    "gpt-5": lambda w, h: openai_tiles_published(w, h, 70, 140),
    "o3": lambda w, h: openai_tiles_published(w, h, 75, 150),
    "computer-use-preview": lambda w, h: openai_tiles_published(w, h, 65, 129),
    "gpt-4.1-mini": lambda w, h: openai_patches_published(w, h, 1.62),
    "gpt-5-nano": lambda w, h: openai_patches_published(w, h, 2.46),
    "o4-mini": lambda w, h: openai_patches_published(w, h, 1.72),
}
SIZES = [  # icons to 8K, and extreme aspect ratios
    (1, 1), (16, 16), (64, 64), (200, 200), (384, 384), (512, 512), (800, 600),
    (1024, 1024), (1092, 1092), (1280, 800), (1920, 1080), (2576, 1932), (3840, 2160),
    (7680, 4320), (4000, 300), (300, 4000), (10000, 64), (64, 8000),
]  # fmt: skip
FORMATS = ["PNG", "JPEG", "GIF", "WEBP"]


def block_for(model: str, raw: bytes, fmt: str) -> dict[str, Any]:
    data, media_type = b64(raw), MEDIA_TYPES[fmt]
    if model.startswith("claude"):
        return anthropic_image(data, media_type)
    return openai_image(data, media_type, detail="high")


# Every size in every format, but 8K in GIF and WebP: their encoders take seconds to make one
# (the header reader is the same), and the other formats cover 8K.
CASES = [
    (width, height, fmt)
    for width, height in SIZES
    for fmt in FORMATS
    if not (fmt in ("GIF", "WEBP") and width * height > 10_000_000)
]


@pytest.mark.parametrize(("width", "height", "fmt"), CASES)
def test_every_size_format_and_model_within_5_percent_of_the_published_rule(
    width: int, height: int, fmt: str
) -> None:
    raw = image_bytes(width, height, fmt)
    for model, published in PUBLISHED.items():
        counted = count(model, block_for(model, raw, fmt))
        expected = published(width, height)
        if max(width, height) > 8000 and model.startswith("claude"):  # refused there
            assert counted.warning and "larger than the provider takes" in counted.warning
        else:
            assert counted.warning is None, counted.warning
        assert abs(counted.tokens - expected) <= max(1, 0.05 * expected), (model, counted)
        assert counted.label == f"{fmt} image {width}×{height}"


@pytest.mark.parametrize(
    ("model", "width", "height", "detail", "tokens"),
    [  # the worked examples of the providers' pages
        ("claude-sonnet-4-6", 200, 200, None, 54),
        ("claude-sonnet-4-6", 1000, 1000, None, 1334),
        ("claude-sonnet-4-6", 1092, 1092, None, 1590),
        ("gpt-4o", 1024, 1024, "high", 765),
        ("gpt-4o", 2048, 4096, "high", 1105),
        ("gpt-4o", 4096, 8192, "low", 85),
        ("gpt-4o", 1920, 1080, "high", 1105),
        ("gpt-4o", 1920, 1080, "low", 85),
        ("gpt-4.1-mini", 1024, 1024, "high", math.ceil(1024 * 1.62)),
        ("gpt-4.1-mini", 1800, 2400, "high", math.ceil(1452 * 1.62)),
    ],
)
def test_worked_examples(model: str, width: int, height: int, detail: str | None, tokens: int):
    data = b64(image_bytes(width, height))
    block = (
        anthropic_image(data) if model.startswith("claude") else openai_image(data, detail=detail)
    )
    assert count(model, block).tokens == tokens


def test_gemini_rules() -> None:
    rules = media_rules()
    assert rules["gemini-2"].image_cost(384, 384).tokens == 258
    assert rules["gemini-2"].image_cost(960, 540).tokens == 6 * 258  # the docs' example
    assert rules["gemini-3"].image_cost(7680, 4320).tokens == 1120
    assert rules["gemini-2"].page_cost(612, 792) == 258
    assert rules["gemini-3"].page_cost(612, 792) == 560


def test_detail_low_high_and_auto_on_gpt_4o() -> None:
    data = b64(image_bytes(3840, 2160))
    low, high = (
        count("gpt-4o", openai_image(data, detail="low")),
        count("gpt-4o", openai_image(data, detail="high")),
    )
    auto = count("gpt-4o", openai_image(data))
    assert (low.tokens, low.exact) == (85, True)
    assert (high.tokens, high.exact) == (1105, True)
    assert (auto.tokens, auto.exact) == (1105, False)  # the model chooses: never under-counted


def test_an_openai_part_is_counted_by_the_claude_rule_for_a_claude_model() -> None:
    data = b64(image_bytes(800, 600))
    assert count("claude-sonnet-4-6", openai_image(data)).tokens == 640
    assert count("gpt-4o", anthropic_image(data)).tokens == 765  # auto: counted as high


@settings(max_examples=25, deadline=None)
@given(
    width=st.integers(1, 3000),
    height=st.integers(1, 3000),
    junk=st.integers(0, 200_000),
    wrap=st.booleans(),
    model=st.sampled_from(sorted(PUBLISHED)),
)
def test_a_count_never_depends_on_the_encoded_length(
    width: int, height: int, junk: int, wrap: bool, model: str
) -> None:
    raw = image_bytes(width, height, "PNG")
    padded = b64(raw + b"\0" * junk)  # bytes after IEND: the same pixels, a longer file
    if wrap:  # MIME-style base64, a line break every 76 characters
        padded = "\n".join(padded[i : i + 76] for i in range(0, len(padded), 76))
    plain = count(model, block_for(model, raw, "PNG"))
    assert count(model, block_for(model, raw, "PNG") | {}).tokens == plain.tokens
    longer = (
        anthropic_image(padded)
        if model.startswith("claude")
        else openai_image(padded, detail="high")
    )
    assert count(model, longer).tokens == plain.tokens


def test_a_jpeg_with_a_large_exif_block_is_read_past_the_first_64_kib() -> None:
    import io

    from PIL import Image

    out = io.BytesIO()
    exif = Image.Exif()
    exif[0x010E] = "x" * 60_000  # ImageDescription: pushes the size marker past 64 KiB of base64
    Image.new("L", (640, 480)).save(out, "JPEG", exif=exif.tobytes())
    assert (
        count("claude-sonnet-4-6", anthropic_image(b64(out.getvalue()), "image/jpeg")).tokens == 410
    )


class TestPdf:
    def test_pages_text_and_page_images(self) -> None:
        text = "The quarterly report shows revenue growth across all regions. " * 20
        one = count("claude-sonnet-4-6", anthropic_pdf(b64(pdf_bytes([text]))))
        three = count("claude-sonnet-4-6", anthropic_pdf(b64(pdf_bytes([text] * 3))))
        page_image = media_rules()["claude-standard"].page_cost(612, 792)
        text_tokens = counter("claude-sonnet-4-6").count_text(text)
        assert one.tokens == page_image + text_tokens
        assert three.tokens == 3 * one.tokens
        assert one.label == "PDF, 1 page" and three.label == "PDF, 3 pages"
        assert one.exact is False and one.warning is None

    def test_junk_bytes_do_not_move_the_count(self) -> None:
        raw = pdf_bytes(["A page of text."])
        block = anthropic_pdf(b64(raw))
        padded = anthropic_pdf(b64(raw + b"%" + b"\x00junk" * 200_000))
        assert count("claude-sonnet-4-6", padded).tokens == count("claude-sonnet-4-6", block).tokens

    def test_gemini_bills_pages_not_text(self) -> None:
        rule = media_rules()["gemini-3"]
        assert rule.page_cost(612, 792) == 560 and not rule.bills_page_text

    def test_openai_file_part_is_a_pdf(self) -> None:
        data = b64(pdf_bytes(["one", "two"]))
        part = {"type": "file", "file": {"file_data": f"data:application/pdf;base64,{data}"}}
        counted = count("gpt-4o", part)
        assert counted.label == "PDF, 2 pages" and counted.warning is None

    @pytest.mark.parametrize(
        ("raw", "why"),
        [
            (b"%PDF-1.4\n1 0 obj << /Type /Catalog", "cannot be opened"),  # truncated
            (b"not a pdf at all" * 100, "cannot be opened"),
            (
                pdf_bytes(["x"])
                .replace(b"xref", b"xrfe")
                .replace(b"/Type /Pages", b"/Type /Pagez"),
                "",
            ),
        ],
    )
    def test_broken_pdfs_get_a_default_and_a_warning(self, raw: bytes, why: str) -> None:
        counted = count("claude-sonnet-4-6", anthropic_pdf(b64(raw)))
        assert counted.tokens > 0
        if counted.warning is not None:
            assert "PDF" in counted.warning and why in counted.warning

    def test_a_million_pages_claimed_costs_what_the_file_holds(self) -> None:
        raw = pdf_bytes(["the only page"]).replace(b"/Count 1", b"/Count 1000000")
        started = time.monotonic()
        counted = count("claude-sonnet-4-6", anthropic_pdf(b64(raw)))
        assert time.monotonic() - started < 5  # a bound, not a benchmark
        assert counted.label == "PDF, 1 page"
        assert counted.warning is not None and "1000000" in counted.warning

    def test_an_encrypted_pdf_gets_a_default(self) -> None:
        raw = pdf_bytes(["secret"]).replace(
            b"trailer\n<< ",
            b"trailer\n<< /Encrypt << /Filter /Standard /V 1 /R 2 /O (x) /U (y) /P -4 >> ",
        )
        counted = count("claude-sonnet-4-6", anthropic_pdf(b64(raw)))
        assert counted.tokens > 0


def png_header(width: int, height: int) -> bytes:
    """A PNG whose header claims `width` × `height` pixels, with a few bytes of image data."""

    def chunk(kind: bytes, body: bytes) -> bytes:
        crc = struct.pack(">I", zlib.crc32(kind + body))
        return struct.pack(">I", len(body)) + kind + body + crc

    ihdr = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    idat = zlib.compress(b"\0" * 1000)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", ihdr) + chunk(b"IDAT", idat) + chunk(b"IEND", b"")


class TestHostileImages:
    def test_a_header_claiming_ten_billion_pixels(self) -> None:
        started = time.monotonic()
        counted = count("claude-sonnet-4-6", anthropic_image(b64(png_header(100_000, 100_000))))
        assert time.monotonic() - started < 1  # never decoded
        assert counted.warning and "larger than the provider takes" in counted.warning
        assert abs(counted.tokens - 1600) <= 16  # the largest image Claude bills

    def test_a_bomb_is_counted_by_its_header(self) -> None:
        counted = count("gpt-4o", openai_image(b64(png_header(12_000, 12_000)), detail="high"))
        assert counted.tokens == 765 and counted.warning is None

    def test_a_truncated_jpeg(self) -> None:
        raw = image_bytes(640, 480, "JPEG")[:100]
        counted = count("claude-sonnet-4-6", anthropic_image(b64(raw), "image/jpeg"))
        assert counted.warning is not None and counted.exact is False

    @pytest.mark.parametrize("data", ["@@@@not base64@@@@", "QUJD" * 1000, ""])
    def test_not_base64_or_not_an_image(self, data: str) -> None:
        counted = count("gpt-4o", openai_image(data, detail="high"))
        assert counted.warning is not None and counted.tokens == 765  # a 2048² image

    def test_a_url_image_is_a_default_with_a_warning(self) -> None:
        block = {"type": "image", "source": {"type": "url", "url": "https://example.com/a.png"}}
        counted = count("claude-sonnet-4-6", block)
        assert counted.warning and "https://example.com/a.png" in counted.warning
        assert abs(counted.tokens - 1600) <= 16


class TestAudio:
    def test_openai_bills_its_duration(self) -> None:
        part = {
            "type": "input_audio",
            "input_audio": {"data": b64(wav_bytes(12.0)), "format": "wav"},
        }
        counted = count("gpt-4o", part)
        assert counted.tokens == 120 and counted.warning is None  # 1 token per 100 ms

    def test_not_the_base64_length(self) -> None:
        short = {
            "type": "input_audio",
            "input_audio": {"data": b64(wav_bytes(1.0, 8000)), "format": "wav"},
        }
        dense = {
            "type": "input_audio",
            "input_audio": {"data": b64(wav_bytes(1.0, 48000)), "format": "wav"},
        }
        assert count("gpt-4o", short).tokens == count("gpt-4o", dense).tokens == 10

    def test_unreadable_audio_and_a_provider_without_audio(self) -> None:
        junk = {"type": "input_audio", "input_audio": {"data": b64(b"junk" * 100), "format": "mp3"}}
        assert count("gpt-4o", junk).warning is not None
        clip = {
            "type": "input_audio",
            "input_audio": {"data": b64(wav_bytes(3.0)), "format": "wav"},
        }
        claude = count("claude-sonnet-4-6", clip)
        assert claude.warning is not None and "take none" in claude.warning


def test_a_text_document_is_counted_by_its_text() -> None:
    text = "Section 1. The service keeps conversations inside the window. " * 30
    block = {
        "type": "document",
        "title": "spec",
        "source": {"type": "text", "media_type": "text/plain", "data": text},
    }
    counted = count("claude-sonnet-4-6", block)
    assert counted.tokens == counter("claude-sonnet-4-6").count_text("spec\n" + text)
    assert counted.warning is None


def test_nested_tool_result_screenshots_are_counted_by_their_pixels() -> None:
    shot = anthropic_image(b64(image_bytes(1280, 800)))
    content = [{"type": "tool_result", "tool_use_id": "t1", "content": [shot]}]
    with_shot = counter("claude-sonnet-4-6").count_content(content)
    empty = counter("claude-sonnet-4-6").count_content(
        [{"type": "tool_result", "tool_use_id": "t1", "content": []}]
    )
    assert with_shot - empty == 3 + 1366  # one block framing + 1280 × 800 / 750
