"""Tier 4: cut one message (or the summary) to a token allowance, with a visible marker.

The cut point is found by binary search over characters, measuring each candidate with the
injected counter, so the result fits whatever the tokenizer. Block content is cut largest
text first (text blocks, tool results, string tool arguments); ids and block shapes stay so
tool pairing survives. Nothing here guesses: a candidate is kept only if the counter says so.
"""

from __future__ import annotations

from collections.abc import Callable

from app.engine.prune import Slot, replace_slots, text_slots
from app.engine.types import Message
from app.tokens.base import TokenCounter


def marker(tokens: int) -> str:
    return f"[… truncated {tokens:,} tokens …]"


def _largest_fitting(length: int, fits: Callable[[int], bool]) -> int | None:
    """Largest k in [0, length] with fits(k) (fits is monotone decreasing in k)."""
    if not fits(0):
        return None
    low, high = 0, length
    while low < high:
        middle = (low + high + 1) // 2
        if fits(middle):
            low = middle
        else:
            high = middle - 1
    return low


def _cut(text: str, keep: int, counter: TokenCounter) -> str:
    if keep >= len(text):
        return text
    removed = max(1, counter.count_text(text) - counter.count_text(text[:keep]))
    head = text[:keep]
    return f"{head}\n{marker(removed)}" if head else marker(removed)


def truncate_text(text: str, allowance: int, counter: TokenCounter) -> str | None:
    """The longest head of `text` plus a marker within `allowance` tokens; None if none fits."""
    if counter.count_text(text) <= allowance:
        return text
    keep = _largest_fitting(
        len(text), lambda k: counter.count_text(_cut(text, k, counter)) <= allowance
    )
    return None if keep is None else _cut(text, keep, counter)


def truncate_message(message: Message, allowance: int, counter: TokenCounter) -> Message | None:
    """`message` cut to at most `allowance` tokens (largest texts first); None if impossible."""
    if message.tokens <= allowance:
        return message
    current = message
    cuts: dict[Slot, str] = {}
    for slot, text in sorted(text_slots(message), key=lambda item: -len(item[1])):

        def with_keep(keep: int, slot: Slot = slot, text: str = text) -> Message:
            return replace_slots(message, {**cuts, slot: _cut(text, keep, counter)}, counter)

        keep = _largest_fitting(len(text), lambda k: with_keep(k).tokens <= allowance)
        if keep is not None:
            return with_keep(keep)
        cuts[slot] = _cut(text, 0, counter)
        current = replace_slots(message, cuts, counter)
    return current if current.tokens <= allowance else None
