"""The one page-cursor codec: an opaque, URL-safe token for a non-negative position.

A cursor is base64url("<kind>:<n>") without padding; `kind` ("s1" session pages, "v1" summary
history) keeps a cursor of one list from being accepted by another. Anything this service did
not issue is `InvalidCursor` (422, docs/reference.md §Errors): a cursor is accepted only when
it is exactly the text this module would issue for its position, so an over-long cursor, a
position beyond a SQL integer, or spaces, signs, leading zeros and stray characters that
`int()` and the base64 decoder would tolerate never reach a query.
"""

from __future__ import annotations

import base64
import binascii

from app.core.errors import InvalidCursor
from app.core.limits import MAX_SQL_INT

# Far above any cursor issued (a sorted session page with a 256-character id prefix and id
# is under 800), far below what could make decoding costly.
MAX_CURSOR_CHARS = 2048
# A rejected cursor is echoed in the error only up to this length.
_ECHOED_CHARS = 200


def not_issued(cursor: str) -> InvalidCursor:
    return InvalidCursor(
        "cursor is not one this service issued", {"cursor": cursor[:_ECHOED_CHARS]}
    )


def encode_text(text: str) -> str:
    """The opaque form of a cursor's text (richer cursors, e.g. sorted session pages)."""
    return base64.urlsafe_b64encode(text.encode()).decode().rstrip("=")


def decode_text(cursor: str) -> str:
    if len(cursor) > MAX_CURSOR_CHARS:
        raise not_issued(cursor)
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
    # Positions are row keys and versions: PostgreSQL `integer` columns.
    if not 0 <= position <= MAX_SQL_INT or encode_cursor(kind, position) != cursor:
        raise not_issued(cursor)
    return position
