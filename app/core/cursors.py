"""The one page-cursor codec: an opaque, URL-safe token for a non-negative position.

A cursor is base64url("<kind>:<n>") without padding; `kind` ("s1" session pages, "v1" summary
history) keeps a cursor of one list from being accepted by another. Anything this service did
not issue is `InvalidCursor` (422, docs/reference.md §Errors).
"""

from __future__ import annotations

import base64
import binascii

from app.core.errors import InvalidCursor


def not_issued(cursor: str) -> InvalidCursor:
    return InvalidCursor("cursor is not one this service issued", {"cursor": cursor})


def encode_text(text: str) -> str:
    """The opaque form of a cursor's text (richer cursors, e.g. sorted session pages)."""
    return base64.urlsafe_b64encode(text.encode()).decode().rstrip("=")


def decode_text(cursor: str) -> str:
    try:
        return base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4)).decode()
    except (ValueError, binascii.Error, UnicodeDecodeError) as exc:
        raise not_issued(cursor) from exc


def encode_cursor(kind: str, position: int) -> str:
    return encode_text(f"{kind}:{position}")


def decode_cursor(kind: str, cursor: str) -> int:
    """The position a cursor of `kind` points at; InvalidCursor for anything we did not issue."""
    prefix = f"{kind}:"
    text = decode_text(cursor)
    try:
        if not text.startswith(prefix):
            raise ValueError(text)
        position = int(text[len(prefix) :])
    except ValueError as exc:
        raise not_issued(cursor) from exc
    if position < 0:
        raise not_issued(cursor)
    return position
