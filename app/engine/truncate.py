"""Tier 4: cut one message (or the summary) to a token allowance, with a visible marker.

The cut point is searched over characters, measuring each candidate with the injected
counter, so the result fits whatever the tokenizer. The search starts where the text's own
characters per token put the cut and gallops out from there: candidates stay near the
allowance's size, so a 2 MB tool output cut to a few thousand tokens is never re-counted
whole at each step (a plain bisection from the middle counted ~20 halves of it). Block
content is cut largest text first (text blocks, tool results, string tool arguments); ids and
block shapes stay so tool pairing survives. Nothing here guesses: a candidate is kept only if
the counter says so.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from typing import Any, cast

from app.core.deadline import check_deadline
from app.engine.media import media_count, without_media
from app.engine.prune import Slot, piece_of, replace_piece, replace_slots, text_slots
from app.engine.types import Message
from app.engine.units import body_tokens, rebuild
from app.tokens.base import TokenCounter


def marker(tokens: int) -> str:
    return f"[… truncated {tokens:,} tokens …]"


# The first step out from the estimated cut; each further step doubles.
FIRST_STEP_CHARS = 16


def _largest_fitting(length: int, fits: Callable[[int], bool], guess: int) -> int | None:
    """Largest k in [0, length] with fits(k) (fits is monotone decreasing in k).

    Galloping from `guess`: O(log e) candidates for an estimate e characters off, each no
    longer than the answer's bracket, then bisection of the bracket.
    """
    if not fits(0):
        return None
    guess = min(max(guess, 0), length)
    step = FIRST_STEP_CHARS
    if fits(guess):  # low fits, high does not (or is past the end)
        low, high = guess, guess + step
        while high <= length and fits(high):
            check_deadline()
            low, step = high, step * 2
            high = low + step
        high = min(high - 1, length)
    else:
        low, high = max(guess - step, 0), guess - 1
        while low > 0 and not fits(low):
            check_deadline()
            high, step = low - 1, step * 2
            low = max(high + 1 - step, 0)
    while low < high:
        check_deadline()
        middle = (low + high + 1) // 2
        if fits(middle):
            low = middle
        else:
            high = middle - 1
    # Token counts of prefixes are not quite monotone (a longer prefix can merge into fewer
    # tokens): a few characters past the bracket may still fit, and a cut keeps the most.
    longer = (k for k in range(min(low + FIRST_STEP_CHARS, length), low, -1) if fits(k))
    return next(longer, low)


def _estimated_keep(text: str, tokens: int, room: int) -> int:
    """Characters of `text` that `room` tokens hold, at the text's average density."""
    return len(text) * max(room, 0) // max(tokens, 1)


def _cut(text: str, keep: int, counter: TokenCounter, tokens: int | None = None) -> str:
    """The head of `keep` characters and its marker; `tokens` is the text's count, if known."""
    if keep >= len(text):
        return text
    whole = counter.count_text(text) if tokens is None else tokens
    removed = max(1, whole - counter.count_text(text[:keep]))
    head = text[:keep]
    return f"{head}\n{marker(removed)}" if head else marker(removed)


def truncate_text(
    text: str,
    allowance: int,
    counter: TokenCounter,
    cut: Callable[[str, int], str] | None = None,
) -> str | None:
    """The longest head of `text` with its marker within `allowance` tokens; None if none fits.

    `cut(text, keep)` writes the candidate that keeps `keep` characters: by default the head
    and a marker saying how many tokens went (the summarizers end a cut item with " …").
    """
    tokens = counter.count_text(text)
    if tokens <= allowance:
        return text
    candidate = cut or (lambda whole, keep: _cut(whole, keep, counter, tokens))
    keep = _largest_fitting(
        len(text),
        lambda k: counter.count_text(candidate(text, k)) <= allowance,
        _estimated_keep(text, tokens, allowance),
    )
    return None if keep is None else candidate(text, keep)


# Slots (largest first) that get a binary search of their own. Past them a message is a heap of
# small texts: the rest are cut whole, in doubling batches with one recount per batch, so a
# message of n tiny blocks costs O(n log n) instead of a re-count of the message per slot.
SEARCHED_SLOTS = 32
# A text shorter than this is cut whole, not searched: a head of a few characters plus the
# ~25-character marker saves little. Texts no longer than a marker are left alone.
SEARCH_MIN_CHARS = 256


class _Draft:
    """A message with cuts applied so far, counted piece by piece (a block, a tool call or the
    string content): one cut re-counts only its own piece, never the whole message."""

    def __init__(self, message: Message, counter: TokenCounter) -> None:
        self.message, self.counter = message, counter
        self.cuts: dict[Slot, str] = {}
        self._by_piece: dict[Slot, dict[Slot, str]] = {}
        self._counts: dict[Slot, int] = {}
        body = body_tokens(message, counter)
        self.total = max(0, message.tokens - body) + body

    def piece_tokens(self, piece: Slot, extra: Mapping[Slot, str] | None = None) -> int:
        if extra is None and piece in self._counts:
            return self._counts[piece]
        texts = {**self._by_piece.get(piece, {}), **(extra or {})}
        only = replace_piece(self.message, piece, texts)
        if piece == ("content",):
            tokens = self.counter.count_text(str(only))
        elif piece[0]:  # a tool call
            tokens = self.counter.count_text(json.dumps(only, ensure_ascii=False, sort_keys=True))
        else:
            tokens = self.counter.count_content([only])
        if extra is None:
            self._counts[piece] = tokens
        return tokens

    def tokens_with(self, slot: Slot, text: str) -> int:
        """The message total if `slot` held `text` (other cuts as they are)."""
        piece = piece_of(slot)
        return self.total - self.piece_tokens(piece) + self.piece_tokens(piece, {slot: text})

    def cut(self, slots: Mapping[Slot, str]) -> None:
        """Apply cuts; each touched piece is re-counted once."""
        touched = {piece_of(slot) for slot in slots}
        before = sum(self.piece_tokens(piece) for piece in touched)
        for slot, text in slots.items():
            self.cuts[slot] = text
            self._by_piece.setdefault(piece_of(slot), {})[slot] = text
        for piece in touched:
            self._counts.pop(piece, None)
        self.total += sum(self.piece_tokens(piece) for piece in touched) - before

    def result(self, allowance: int) -> Message | None:
        """The cut message, re-counted whole, if it fits (the piecewise total says when not)."""
        if self.total > allowance:
            return None
        final = replace_slots(self.message, self.cuts, self.counter)
        return final if final.tokens <= allowance else None


def truncate_message(message: Message, allowance: int, counter: TokenCounter) -> Message | None:
    """`message` cut to at most `allowance` tokens (largest texts first); None if impossible.

    Work is O(n log n) in the message's size whatever its shape (many tiny blocks, a tool input
    with many keys): a candidate re-counts only the piece it changes.
    """
    if message.tokens <= allowance:
        return message
    if media_count(message):  # its media go first, each for a one-line placeholder
        content = without_media(message.content, counter, message.seq)
        message = rebuild(message, counter, content, cast(Any, message.tool_calls))
        if message.tokens <= allowance:
            return message
    draft = _Draft(message, counter)
    slots = sorted(text_slots(message), key=lambda item: -len(item[1]))
    slots = [(slot, text) for slot, text in slots if len(text) > len(marker(1))]
    for slot, text in slots[:SEARCHED_SLOTS]:
        if len(text) < SEARCH_MIN_CHARS:
            break

        tokens = counter.count_text(text)

        def fits(keep: int, slot: Slot = slot, text: str = text, tokens: int = tokens) -> bool:
            return draft.tokens_with(slot, _cut(text, keep, counter, tokens)) <= allowance

        guess = _estimated_keep(text, tokens, allowance - (draft.total - tokens))
        keep = _largest_fitting(len(text), fits, guess)
        if keep is not None:
            draft.cut({slot: _cut(text, keep, counter, tokens)})
            return draft.result(allowance)
        draft.cut({slot: _cut(text, 0, counter, tokens)})
    rest, size = [item for item in slots if item[0] not in draft.cuts], 1
    while rest and draft.total > allowance:
        check_deadline()
        batch, rest, size = rest[:size], rest[size:], size * 2
        draft.cut({slot: _cut(text, 0, counter) for slot, text in batch})
    return draft.result(allowance)
