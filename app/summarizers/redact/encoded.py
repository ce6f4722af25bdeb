"""Encoded secrets: JOSE tokens (JWT, JWE) and base64 runs that decode to a secret (a key file,
JSON credentials, an AWS `id:secret` pair). Decoded once, never recursively."""

from __future__ import annotations

import base64
import binascii
import json
import re
from collections.abc import Callable, Iterator

import app.summarizers.redact.patterns as patterns
from app.summarizers.redact.base import Hit, compiled, regex

_B64_NOISE = compiled(patterns.B64_NOISE)
_WRAPPED = compiled(patterns.WRAPPED)
_BASE64_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/")


def b64decode(value: str, *, urlsafe: bool = False) -> bytes:
    """`value` decoded (line breaks, escapes and a cut-off last group dropped); b"" if not
    base64."""
    if urlsafe:
        data = value + "=" * (-len(value) % 4)
    else:
        data = _B64_NOISE.sub("", value).replace("\\/", "/")
        data = data[: len(data) - len(data) % 4]
    try:
        return (base64.urlsafe_b64decode if urlsafe else base64.b64decode)(data)
    except (binascii.Error, ValueError):
        return b""


def _jose(match: re.Match[str]) -> tuple[int, int] | None:
    """A JWT (3 parts) or JWE (5 parts) whose first part decodes to a JOSE header."""
    token = match.group()
    try:
        header = json.loads(b64decode(token.split(".", 1)[0], urlsafe=True) or b"null")
    except ValueError:
        return None
    if not isinstance(header, dict) or not {"alg", "enc", "typ"} & header.keys():
        return None
    start, end = match.span()
    while token.endswith(".") and token.count(".") not in (2, 4):
        token, end = token[:-1], end - 1  # a sentence's full stop after the token
    return start, end


_JOSE = regex(patterns.RULE_PATTERNS["jose"], _jose)


def jose_tokens(text: str) -> Iterator[Hit]:
    for hit in _JOSE(text):
        parts = text.count(".", hit.start, hit.end) + 1
        yield hit._replace(kind="jwe" if parts == 5 else "jwt")


def base64_wrapped(text: str, inner: Callable[[str], list[Hit]]) -> Iterator[Hit]:
    """Base64 of a key file, of JSON credentials or of an AWS key pair: decoded, and taken whole
    when `inner` finds a secret in the decoded text (labelled with the inner kind)."""
    for match in _WRAPPED.finditer(text):
        if match.start() and text[match.start() - 1] in _BASE64_CHARS:
            continue  # inside a longer run: not where the encoding starts
        decoded = b64decode(match.group()).decode("utf-8", "replace")
        found = inner(decoded)
        if found:
            yield Hit(match.start(), match.end(), found[0].kind)
