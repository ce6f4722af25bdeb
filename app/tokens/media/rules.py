"""How a provider bills media, per model generation (app/data/media_rules.json).

Image rules (docs/media-counting.md has each source and the date it was checked):
- `claude`: scaled down (aspect kept) until the long edge is at most `long_edge` and
  width × height / 750 at most `max_tokens`; then ⌈width × height / 750⌉. Past `max_edge`
  pixels a side the API refuses the image: counted, with a warning.
- `openai_tiles`: `low` costs `base`; `high` fits the image in 2048 × 2048, scales its short
  side down to 768, and costs `base + tile × 512-px tiles`. `auto` lets the model choose: we
  count `high` (never under-count) and say the count is not exact.
- `openai_patches`: 32-px patches, at most `max_patches` (the image scaled down to fit), times
  `multiplier`; `detail` does not change it.
- `gemini_tiles` (Gemini 2.x): `tokens` when both edges are at most `small_edge`, else
  `tokens` per tile, tiles of side min(width, height) / 1.5 clamped to 256–768.
- `fixed`: `tokens` an image whatever its size (Gemini 3's default media resolution).
"""

from __future__ import annotations

import functools
import json
import math
from dataclasses import dataclass
from importlib import resources
from typing import Any

from app.tokens.media.blocks import Detail

CLAUDE_PIXELS_PER_TOKEN = 750
OPENAI_FIT = 2048
OPENAI_SHORT_SIDE = 768
OPENAI_TILE = 512
OPENAI_PATCH = 32
# The size a page of a PDF is seen at when the provider bills it as an image: the long edge at
# Claude's standard cap (no provider publishes the size it renders a page at).
PAGE_LONG_EDGE = 1568


@dataclass(frozen=True)
class ImageCost:
    tokens: int
    exact: bool


@dataclass(frozen=True)
class MediaRule:
    """One provider generation's media billing; `name` is its key in media_rules.json."""

    name: str
    image: dict[str, Any]
    pdf: dict[str, Any]
    audio_tokens_per_second: float | None
    checked: str
    source: str

    def image_cost(self, width: int, height: int, detail: Detail = "auto") -> ImageCost:
        """Tokens of a `width` × `height` image sent with `detail`."""
        rule = self.image
        kind = rule["rule"]
        if kind == "claude":
            return ImageCost(_claude(width, height, rule["long_edge"], rule["max_tokens"]), True)
        if kind == "openai_tiles":
            if detail == "low":
                return ImageCost(rule["base"], True)
            tiles = _openai_tiles(width, height)
            return ImageCost(rule["base"] + rule["tile"] * tiles, detail == "high")
        if kind == "openai_patches":
            patches = _openai_patches(width, height, rule["max_patches"])
            return ImageCost(math.ceil(patches * rule["multiplier"]), True)
        if kind == "gemini_tiles":
            return ImageCost(
                rule["tokens"] * _gemini_tiles(width, height, rule["small_edge"]), True
            )
        return ImageCost(rule["tokens"], True)  # fixed

    def page_cost(self, width_pt: float, height_pt: float) -> int:
        """Tokens a PDF page is billed besides its text (its image, or a flat per-page cost)."""
        if "page_tokens" in self.pdf:
            return int(self.pdf["page_tokens"])
        if not self.pdf.get("page_image"):
            return 0
        long_pt = max(width_pt, height_pt, 1.0)
        scale = PAGE_LONG_EDGE / long_pt
        width = max(1, round(width_pt * scale))
        height = max(1, round(height_pt * scale))
        return self.image_cost(width, height, "high").tokens

    @property
    def bills_page_text(self) -> bool:
        return bool(self.pdf.get("page_text"))


def _claude(width: int, height: int, long_edge: int, max_tokens: int) -> int:
    scale = min(1.0, long_edge / max(width, height))
    scale = min(scale, math.sqrt(max_tokens * CLAUDE_PIXELS_PER_TOKEN / (width * height)))
    w, h = max(1, math.floor(width * scale)), max(1, math.floor(height * scale))
    return min(max_tokens, math.ceil(w * h / CLAUDE_PIXELS_PER_TOKEN))


def _openai_tiles(width: int, height: int) -> int:
    scale = min(1.0, OPENAI_FIT / max(width, height))
    w, h = width * scale, height * scale
    scale = min(1.0, OPENAI_SHORT_SIDE / min(w, h))
    w, h = w * scale, h * scale
    return math.ceil(w / OPENAI_TILE) * math.ceil(h / OPENAI_TILE)


def _openai_patches(width: int, height: int, max_patches: int) -> int:
    patches = math.ceil(width / OPENAI_PATCH) * math.ceil(height / OPENAI_PATCH)
    if patches <= max_patches:
        return patches
    # OpenAI's published resize: shrink to the patch budget, then to whole patches on the
    # edge that binds.
    shrink = math.sqrt(OPENAI_PATCH**2 * max_patches / (width * height))
    w_patches, h_patches = width * shrink / OPENAI_PATCH, height * shrink / OPENAI_PATCH
    shrink *= min(math.floor(w_patches) / w_patches, math.floor(h_patches) / h_patches)
    w, h = width * shrink, height * shrink
    return min(max_patches, math.ceil(w / OPENAI_PATCH) * math.ceil(h / OPENAI_PATCH))


def _gemini_tiles(width: int, height: int, small_edge: int) -> int:
    if width <= small_edge and height <= small_edge:
        return 1
    unit = min(768.0, max(256.0, min(width, height) / 1.5))
    return math.ceil(width / unit) * math.ceil(height / unit)


@functools.cache
def media_rules() -> dict[str, MediaRule]:
    """Every rule in app/data/media_rules.json, by name."""
    text = (resources.files("app") / "data" / "media_rules.json").read_text("utf-8")
    data = json.loads(text)
    return {
        name: MediaRule(
            name=name,
            image=entry["image"],
            pdf=entry["pdf"],
            audio_tokens_per_second=(entry["audio"] or {}).get("tokens_per_second"),
            checked=entry["checked"],
            source=entry["source"],
        )
        for name, entry in data.items()
        if not name.startswith("_")
    }
