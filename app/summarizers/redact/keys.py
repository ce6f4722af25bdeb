"""Private keys: PEM blocks (with or without their END, or their BEGIN), PuTTY key files, bare
DER bodies, and a key's body lines alone (64 columns of random base64, no line around them).
Base64-wrapped keys (a Kubernetes secret, a CI variable) are decoded by `encoded`."""

from __future__ import annotations

import re
from collections.abc import Iterator

import app.summarizers.redact.patterns as patterns
import app.summarizers.redact.words as words
from app.summarizers.redact.base import Hit, compiled
from app.summarizers.redact.encoded import b64decode

MAX_KEY_CHARS = 16384  # an RSA-8192 PEM is ≈ 6.4 kB
_END_LINE = compiled(patterns.PEM_END)
_BREAK = compiled(patterns.NL)
_B64_ONLY = compiled(rf"[ \t]{{0,64}}{patterns.B64_CHAR}{{0,4096}}+[ \t]{{0,64}}")
_B64_RUN = compiled(r"[A-Za-z0-9+/]{16}")
_B64_TAIL = compiled(rf"(?<![A-Za-z0-9+/=]){patterns.B64_CHAR}{{16,4096}}+[ \t]{{0,64}}\Z")
_COLUMNS = compiled(patterns.PEM_COLUMNS)
_BEGIN_BEFORE = compiled(patterns.PEM_BEGIN_BEFORE)
_END_AFTER = compiled(patterns.PEM_END_AFTER)
_PRINTABLE = frozenset(range(0x20, 0x7F)) | {0x09, 0x0A, 0x0D}


def key_body_before_end(text: str) -> Iterator[Hit]:
    """A key body whose BEGIN line is gone (an excerpt, `tail id_rsa`): the base64 lines right
    before an END line, walked back to the first line that is not base64, plus the base64 tail
    of that line (`{"key": "MIIE…`). Each window ends where the previous END was: linear."""
    floor = 0
    for end_line in _END_LINE.finditer(text):
        window = max(floor, end_line.start() - MAX_KEY_CHARS)
        floor = end_line.end()
        start = _body_start(text, window, end_line.start())
        if _B64_RUN.search(text, start, end_line.start()):
            yield Hit(start, end_line.end(), "")


def _body_start(text: str, window: int, end: int) -> int:
    """Where the base64 lines that end at `end` begin, looking back no further than `window`."""
    breaks = list(_BREAK.finditer(text, window, end))
    line_end, start = end, end
    line_start = window
    for brk in reversed(breaks):  # newest line first
        if not _B64_ONLY.fullmatch(text, brk.end(), line_end):
            line_start = brk.end()
            break
        start, line_end = brk.end(), brk.start()
    else:
        if _B64_ONLY.fullmatch(text, window, line_end):
            line_start = start = window
    tail = _B64_TAIL.search(text, line_start, line_end)
    return start if tail is None else tail.start()


def with_body(match: re.Match[str]) -> tuple[int, int] | None:
    """A key file's first line alone (`the file starts with -----BEGIN RSA PRIVATE KEY-----`)
    holds nothing secret."""
    return match.span() if _B64_RUN.search(match.group()) else None


def key_columns(match: re.Match[str]) -> tuple[int, int] | None:
    """Three or more 64-column lines of base64 with neither BEGIN nor END around them (a key's
    body cut at both ends): taken when they decode to random bytes that hold none of a
    certificate's structure. A certificate's or public key's block (its BEGIN or END line
    beside the run), base64 of text, and `base64`'s 76-column output are not taken."""
    text, start, end = match.string, match.start(), match.end()
    if _BEGIN_BEFORE.search(text, max(0, start - 96), start) or _END_AFTER.match(text, end):
        return None
    decoded = b64decode(match.group())
    printable = sum(byte in _PRINTABLE for byte in decoded)
    if not decoded or printable > 0.6 * len(decoded):
        return None
    if any(marker in decoded for marker in words.CERTIFICATE_MARKERS):
        return None
    return match.span()
