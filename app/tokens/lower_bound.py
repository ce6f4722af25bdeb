"""A lower bound on a token count, without encoding: one token per whitespace-separated word.

tiktoken first splits text with its encoding's pattern, then encodes each piece on its own
(at least one token per piece). In every pattern we use (cl100k_base, o200k_base) a piece is
either whitespace only, or non-whitespace characters from a single word, with at most one
leading space and trailing line breaks: no piece holds characters of two words. So a text
has at least as many tokens as words. (`str.split()` also splits at U+001C–U+001F, which the
patterns do not treat as whitespace: those are made letters before splitting.)

The stateless routes use it where only a lower bound matters
(app/engine/newest.py); splitting is ~10× faster than encoding.
"""

from __future__ import annotations

import functools
import re

from app.tokens.counter import TiktokenCounter
from app.tokens.encodings import get_encoding

# Separators of str.split() that are not Unicode White_Space (tiktoken's `\s`).
_SEPARATORS_ONLY_TO_PYTHON = re.compile("[\x1c-\x1f]")


def fewest_tokens(text: str) -> int:
    """A number no greater than any of our encodings' count of `text`."""
    # Four `in` scans (memchr) are ~100× faster than one regex search; a match is rare.
    if "\x1c" in text or "\x1d" in text or "\x1e" in text or "\x1f" in text:
        text = _SEPARATORS_ONLY_TO_PYTHON.sub("x", text)
    return len(text.split())


class LowerBoundCounter(TiktokenCounter):
    """A counter whose every count is a lower bound of `TiktokenCounter`'s for the same input:
    the same structure (framing, overheads, images), with each text counted by its words."""

    def count_text(self, text: str) -> int:
        return fewest_tokens(text)

    def clear_cache(self) -> None:
        """Nothing is remembered."""


@functools.cache
def _floor(encoding_name: str) -> LowerBoundCounter:
    return LowerBoundCounter(get_encoding(encoding_name))


def lower_bound_counter(counter: TiktokenCounter) -> LowerBoundCounter:
    """The floor of `counter`: its encoding and media rule, texts counted by their words."""
    return _floor(counter.encoding_name).with_media(counter.media_rule)


__all__ = ["LowerBoundCounter", "fewest_tokens", "lower_bound_counter"]
