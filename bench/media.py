"""Media bench: counting what users now post, as the provider bills it.

`python -m bench.media`. In process, on this machine, each case against a baseline of the
same run (ratios, not seconds, are the figures to compare across machines):
- a 200-page PDF (text on every page) counted cold (never seen: pdfium opens it and reads
  each page's text) and warm (the same document again: remembered by its data), against
  encoding the same pages' text with tiktoken;
- a 1920 × 1080 PNG screenshot counted cold (its header read) and warm, against counting
  its base64 as text (how images used to be counted for OpenAI models);
- a text-only message list counted with the media-aware counter, against the same counter
  before media (`count_content` of text blocks is unchanged: the ratio is ~1).
"""

from __future__ import annotations

import base64
import io
import time
from collections.abc import Callable
from typing import Any

from PIL import Image

from app.core.settings import Settings
from app.tokens.counter import TiktokenCounter, counter_for
from app.tokens.media.probe import PROBES
from app.tokens.registry import load_registry
from bench import harness
from bench.harness import Target
from tests.support.media import pdf_bytes

PAGES = 200
SCREEN = (1920, 1080)
COUNTERS: list[TiktokenCounter] = []
PDF_TARGET_S = 1.0
REPEATS = 5


def _best(
    action: Callable[[], Any], repeats: int = REPEATS, before: Callable[[], Any] | None = None
) -> float:
    times = []
    for _ in range(repeats):
        if before is not None:
            before()
        started = time.perf_counter()
        action()
        times.append(time.perf_counter() - started)
    return min(times)


def screenshot() -> bytes:
    """A 1920 × 1080 PNG that compresses like a screenshot with photos in it (~1.5 MB)."""
    out = io.BytesIO()
    Image.effect_noise(SCREEN, 40).convert("RGB").save(out, "PNG")
    return out.getvalue()


def cold() -> None:
    """Forget every probe and remembered text count: the next count does all the work."""
    PROBES.clear()
    for counter in COUNTERS:
        counter.clear_cache()


def measure() -> dict[str, Any]:
    registry = load_registry(Settings(_env_file=None))
    claude, gpt = (
        counter_for(registry.get("claude-sonnet-4-6")),
        counter_for(registry.get("gpt-4o")),
    )
    COUNTERS[:] = [claude, gpt]
    page_text = [
        f"Page {n}. " + " ".join(f"clause {n}.{i} of the agreement applies" for i in range(60))
        for n in range(PAGES)
    ]
    pdf = base64.b64encode(pdf_bytes(page_text)).decode()
    source = {"type": "base64", "media_type": "application/pdf", "data": pdf}
    document = {"type": "document", "source": source}
    shot = base64.b64encode(screenshot()).decode()
    image = {
        "type": "image_url",
        "image_url": {"url": f"data:image/png;base64,{shot}", "detail": "high"},
    }
    text_blocks = [{"type": "text", "text": t} for t in page_text]
    results: dict[str, Any] = {
        "pdf_bytes": len(pdf) * 3 // 4,
        "pdf_tokens": claude.count_content([document]),
        "pdf_cold": _best(lambda: claude.count_content([document]), before=cold),
        "pdf_warm": _best(lambda: claude.count_content([document])),
        "pdf_text": _best(lambda: [claude._encode(t) for t in page_text]),
        "image_tokens": gpt.count_content([image]),
        "image_as_text_tokens": gpt.count_text(shot),
        "image_cold": _best(lambda: gpt.count_content([image]), before=cold),
        "image_warm": _best(lambda: gpt.count_content([image])),
        "image_as_text": _best(lambda: gpt._encode(shot)),
        "text_media_aware": _best(lambda: claude.count_content(text_blocks), 20, cold),
        "text_plain": _best(lambda: sum(len(claude._encode(t)) + 3 for t in page_text), 20),
    }
    return results


def section(r: dict[str, Any]) -> str:
    m = harness.machine()
    rows = [
        [f"{PAGES}-page PDF ({r['pdf_bytes'] / 1e3:,.0f} kB), cold", f"{r['pdf_tokens']:,}",
         f"{r['pdf_cold'] * 1e3:.1f}", f"{r['pdf_text'] * 1e3:.1f} (tiktoken on its text)",
         f"**{r['pdf_cold'] / r['pdf_text']:.2f}**"],
        [f"{PAGES}-page PDF, warm (seen before)", f"{r['pdf_tokens']:,}",
         f"{r['pdf_warm'] * 1e3:.2f}", f"{r['pdf_text'] * 1e3:.1f}",
         f"**{r['pdf_warm'] / r['pdf_text']:.3f}**"],
        ["1920×1080 PNG, gpt-4o `high`, cold",
         f"{r['image_tokens']:,} (as base64 text: {r['image_as_text_tokens']:,})",
         f"{r['image_cold'] * 1e3:.2f}", f"{r['image_as_text'] * 1e3:.2f} (tiktoken on its base64)",
         f"**{r['image_cold'] / r['image_as_text']:.2f}**"],
        ["1920×1080 PNG again (images are not remembered)",
         f"{r['image_tokens']:,}", f"{r['image_warm'] * 1e3:.3f}",
         f"{r['image_as_text'] * 1e3:.2f}", f"**{r['image_warm'] / r['image_as_text']:.3f}**"],
        [f"{PAGES} text blocks, media-aware counter", "", f"{r['text_media_aware'] * 1e3:.2f}",
         f"{r['text_plain'] * 1e3:.2f} (tiktoken + block framing)",
         f"**{r['text_media_aware'] / r['text_plain']:.2f}**"],
    ]  # fmt: skip
    body = harness.table(
        ["case", "tokens", "ms (best of runs)", "baseline ms", "ratio"], rows, "lrrrr"
    )
    return f"""## Media counting: PDFs by their pages, images by their pixels

`python -m bench.media` ({m["date"]}, {m["cpu"]}, commit {m["commit"]}). Best of {REPEATS}
runs (20 for the text case), in process, each cold (nothing remembered) unless warm.
A count follows the pages and pixels the provider
bills, not the bytes: the PDF costs {r["pdf_tokens"]:,} tokens on `claude-sonnet-4-6` (its
text plus a page image per page), the screenshot {r["image_tokens"]:,} on `gpt-4o` instead
of {r["image_as_text_tokens"]:,} as base64 text. Cold means never seen by this process
(pdfium reads every page); a document seen before is remembered by its data.

{body}

Target: a {PAGES}-page PDF counted cold in under {PDF_TARGET_S:.0f} s
({r["pdf_cold"]:.2f} s here); text-only counting unchanged (ratio ≈ 1).
"""


def targets(r: dict[str, Any]) -> list[Target]:
    return [
        Target(f"{PAGES}-page PDF counted cold (s)", r["pdf_cold"], PDF_TARGET_S, at_most=True),
        Target(
            "text-only counting ÷ tiktoken + framing",
            r["text_media_aware"] / r["text_plain"],
            1.2,
            at_most=True,
        ),
    ]


def main() -> int:
    results = measure()
    harness.publish(section(results), targets(results))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
