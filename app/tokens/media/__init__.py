"""Media counted as the provider bills it: images by their pixels, PDFs by their pages, audio
by its duration, never by the length of their base64 (docs/media-counting.md).

`count_media(block, rule, count_text)` is the one rule every path uses (through
`TiktokenCounter`): `POST /count-tokens`, appends, contexts, stateless routes and the CLI.
A block whose bytes the service does not hold (a URL, a file id) or cannot read is counted by
a documented default and says so in `warning`.
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from app.tokens.media.blocks import MEDIA_BLOCK_TYPES, MediaRef, media_ref
from app.tokens.media.probe import PROBES, Probe, ProbeCache
from app.tokens.media.rules import MediaRule, media_rules

# Defaults for what cannot be measured (docs/media-counting.md):
DEFAULT_IMAGE_SIZE = (2048, 2048)
"""An image whose pixels are unknown is counted as this size (the rule's caps then apply)."""
DEFAULT_PDF_PAGES = 5
DEFAULT_PAGE_TEXT_TOKENS = 1_000
LETTER_PAGE_PT = (612.0, 792.0)
DEFAULT_AUDIO_SECONDS = 60.0
FALLBACK_AUDIO_TOKENS_PER_SECOND = 10
"""For a provider that takes no audio: OpenAI's input rate (1 token per 100 ms)."""
DEFAULT_FILE_TOKENS = 1_000


@dataclass(frozen=True, slots=True)
class MediaCount:
    """Tokens of one media block, whether the count follows the provider's rule exactly, what
    the block is (for placeholders and the Inspector) and why a default was used, if one was."""

    tokens: int
    exact: bool
    kind: str
    label: str
    warning: str | None = None


def count_media(
    block: Mapping[str, Any],
    rule: MediaRule,
    count_text: Callable[[str], int],
    probes: ProbeCache = PROBES,
) -> MediaCount | None:
    """The count of a media `block` by `rule`, or None when `block` is not media."""
    ref = media_ref(block)
    if ref is None:
        return None
    if ref.kind == "image":
        return _image(ref, rule, probes)
    if ref.kind == "pdf":
        return _pdf(ref, rule, count_text, probes)
    if ref.kind == "text":
        return MediaCount(count_text(ref.text or ""), True, "document", ref.describe())
    if ref.kind == "audio":
        return _audio(ref, rule, probes)
    return _file(ref, count_text)


def _image(ref: MediaRef, rule: MediaRule, probes: ProbeCache) -> MediaCount:
    if ref.data is None:
        return _default_image(ref, rule, f"it is given by reference ({ref.reference})")
    probe = probes.get("image", ref.data)
    if probe.error is not None:
        return _default_image(ref, rule, probe.error)
    cost = rule.image_cost(probe.width, probe.height, ref.detail)
    label = f"{probe.format} image {probe.width}×{probe.height}"
    warning = None
    max_edge = rule.image.get("max_edge")
    if max_edge is not None and max(probe.width, probe.height) > max_edge:
        warning = f"{label}: larger than the provider takes ({max_edge} px a side)"
    return MediaCount(cost.tokens, cost.exact, "image", label, warning)


def _default_image(ref: MediaRef, rule: MediaRule, why: str) -> MediaCount:
    width, height = DEFAULT_IMAGE_SIZE
    tokens = rule.image_cost(width, height, ref.detail).tokens
    warning = f"{ref.describe()}: {why}; counted as a {width}×{height} image ({tokens} tokens)"
    return MediaCount(tokens, False, "image", ref.describe(), warning)


def _pdf(
    ref: MediaRef, rule: MediaRule, count_text: Callable[[str], int], probes: ProbeCache
) -> MediaCount:
    probe: Probe | None = probes.get("pdf", ref.data) if ref.data is not None else None
    if probe is None or probe.error is not None or not probe.pages:
        why = (
            f"it is given by reference ({ref.reference})"
            if probe is None
            else (probe.error or "it has no pages that could be read")
        )
        page_tokens = rule.page_cost(*LETTER_PAGE_PT)
        text_tokens = DEFAULT_PAGE_TEXT_TOKENS if rule.bills_page_text else 0
        tokens = DEFAULT_PDF_PAGES * (page_tokens + text_tokens)
        warning = (
            f"PDF: {why}; counted as {DEFAULT_PDF_PAGES} Letter pages with "
            f"{DEFAULT_PAGE_TEXT_TOKENS} tokens of text each ({tokens} tokens)"
        )
        return MediaCount(tokens, False, "document", "PDF", warning)
    tokens = 0
    for page in probe.pages:
        tokens += rule.page_cost(page.width_pt, page.height_pt)
        if rule.bills_page_text:
            tokens += count_text(page.text)
    unread = probe.pages_claimed - len(probe.pages)
    if unread > 0:  # pages past the limits: each at the average of those read
        tokens += round(tokens / len(probe.pages) * unread)
    label = f"PDF, {probe.pages_claimed} page{'s' if probe.pages_claimed != 1 else ''}"
    note = f"PDF: {probe.note}" if probe.note else None
    return MediaCount(tokens, False, "document", label, note)


def _audio(ref: MediaRef, rule: MediaRule, probes: ProbeCache) -> MediaCount:
    rate = rule.audio_tokens_per_second
    warnings: list[str] = []
    if rate is None:
        rate = FALLBACK_AUDIO_TOKENS_PER_SECOND
        warnings.append(f"audio: the {rule.name} models take none")
    probe = probes.get("audio", ref.data) if ref.data is not None else None
    if probe is None or probe.error is not None:
        seconds = DEFAULT_AUDIO_SECONDS
        why = f"it is given by reference ({ref.reference})" if probe is None else probe.error
        warnings.append(f"{ref.describe()}: {why}; counted as {seconds:.0f} s")
    else:
        seconds = probe.seconds
    tokens = max(1, round(seconds * rate))
    label = f"{ref.describe()}, {seconds:.1f} s"
    return MediaCount(tokens, False, "audio", label, "; ".join(warnings) or None)


def _file(ref: MediaRef, count_text: Callable[[str], int]) -> MediaCount:
    """A file part that is not a PDF: a text file is counted by its text, else a default."""
    if ref.data is not None and (ref.media_type or "").startswith("text/"):
        try:
            text = base64.b64decode(ref.data, validate=True).decode("utf-8", "replace")
        except (binascii.Error, ValueError):
            text = None
        if text is not None:
            return MediaCount(count_text(text), False, "document", ref.describe())
    where = ref.reference or ref.media_type or "unknown type"
    warning = f"file ({where}): counted as {DEFAULT_FILE_TOKENS} tokens"
    return MediaCount(DEFAULT_FILE_TOKENS, False, "document", ref.describe(), warning)


__all__ = ["MEDIA_BLOCK_TYPES", "MediaCount", "MediaRule", "count_media", "media_rules"]
