"""The one page-cursor codec: an opaque, URL-safe token for a non-negative position.

A cursor is base64url("<kind>:<n>") without padding; `kind` ("s1" session pages, "v1" summary
history) keeps a cursor of one list from being accepted by another. Anything this service did
not issue is `InvalidCursor` (422, docs/reference.md §Errors).
"""

from __future__ import annotations

import base64
import binascii

from app.core.errors import InvalidCursor


def encode_cursor(kind: str, position: int) -> str:
    return base64.urlsafe_b64encode(f"{kind}:{position}".encode()).decode().rstrip("=")


def decode_cursor(kind: str, cursor: str) -> int:
    """The position a cursor of `kind` points at; InvalidCursor for anything we did not issue."""
    prefix = f"{kind}:"
    try:
        text = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4)).decode()
        if not text.startswith(prefix):
            raise ValueError(text)
        position = int(text[len(prefix) :])
    except (ValueError, binascii.Error, UnicodeDecodeError) as exc:
        raise InvalidCursor("cursor is not one this service issued", {"cursor": cursor}) from exc
    if position < 0:
        raise InvalidCursor("cursor is not one this service issued", {"cursor": cursor})
    return position
