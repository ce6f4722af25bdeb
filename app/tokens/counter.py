"""Token counts of text, content blocks, messages and tool definitions, with tiktoken.

Plain text is encoded with `encode_ordinary` (tiktoken documents it as equivalent to
`encode(text, disallowed_special=())`, and it is the fastest path): text that contains
"<|endoftext|>" is counted as ordinary text instead of raising. Structural overheads are
named constants below; for Claude models the whole count is an estimate that calibration
(app/engine/calibration.py) corrects against what the provider reports.
"""

from __future__ import annotations

import copy
import functools
import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Self

import tiktoken

from app.core.content import Content
from app.core.lru import TextKeyedLRU
from app.tokens.base import MessageFields
from app.tokens.encodings import get_encoding
from app.tokens.media import MEDIA_BLOCK_TYPES, MediaCount, MediaRule, count_media, media_rules
from app.tokens.registry import ModelInfo

# OpenAI cookbook ("How to count tokens with tiktoken", gpt-3.5-turbo-0613 and later):
# every message is framed as <|start|>{role}<|message|>{content}<|end|>, i.e. 3 tokens
# besides the role and content themselves, and a `name` costs 1 more token.
TOKENS_PER_MESSAGE = 3
TOKENS_PER_NAME = 1
# A content block is wrapped in a few tokens of markup by the provider's prompt renderer
# (type marker and delimiters); 3 is the same framing cost as a message and an estimate.
TOKENS_PER_BLOCK = 3
# The media rule of a counter made for an encoding alone (tests, warm-up); a model's counter
# has its own (`counter_for`).
DEFAULT_MEDIA_RULE = "claude-standard"
# Each OpenAI tool call carries an id, a type and framing around name and arguments.
TOKENS_PER_TOOL_CALL = 3
# Each tool definition is rendered with a header and separators around its JSON schema.
TOKENS_PER_TOOL = 8
# Counts of long texts are remembered (LRU): stateless clients re-post the same history
# before every generation, and encoding dominates that route (~95 ms per 124k tokens).
# Short texts encode faster than they hash and compare, so they are not cached.
CACHE_MIN_CHARS = 512
CACHE_MAX_CHARS = 32_000_000  # ≈ 32 MB of ASCII text kept as keys, per encoding
# tiktoken's work on one long pre-token (a run of letters, blanks or punctuation) is
# superlinear (2.4× per doubling: 1.8 s for 2M newlines, 1 s for 2M "e"), and past ~1M
# spaces its pre-tokenizer panics (a Rust stack overflow, raised as a BaseException). A text
# longer than LONG_TEXT_CHARS is encoded in pieces of at least PIECE_CHARS, each ending before
# a space that follows a non-blank: the pre-tokenizer splits there anyway, so the sum is the
# exact count. A stretch of LONG_TEXT_CHARS without such a space (one long pre-token) is cut
# every PIECE_CHARS, within a few tokens of the whole count.
LONG_TEXT_CHARS = 8192
PIECE_CHARS = 4096
_NON_BLANK = re.compile(r"\S")
# A text this long leaves its pieces behind (`_Pieces`): the next text that starts the same
# way (a cut's candidates: one head after another, with or without its marker, alone or in
# its JSON) re-encodes only from where the two differ. Shorter texts encode in a few ms.
REUSE_MIN_CHARS = 2 * LONG_TEXT_CHARS


@dataclass(frozen=True, slots=True)
class _Pieces:
    """How a long text was encoded: where each piece the loop cut starts (`starts[0]` is 0;
    the last is where the final piece starts) and the tokens before it."""

    text: str
    starts: list[int]
    before: list[int]

    def shared(self, text: str) -> int:
        """How many of these pieces `text` encodes the same way: the piece from `starts[i]` is
        cut by reading `LONG_TEXT_CHARS` from there, so it is the same piece in `text` when
        both agree that far and `text` goes on past it (the loop cuts it in `text` too).
        Binary search over the pieces; the test is monotone in i."""
        low, high = 0, len(self.starts) - 1
        while low < high:
            middle = (low + high + 1) // 2
            window = self.starts[middle - 1] + LONG_TEXT_CHARS
            if len(text) > window and text.startswith(self.text[:window]):
                low = middle
            else:
                high = middle - 1
        return low


def _json(value: Any) -> str:
    # Compact separators: the JSON is only measured, never sent, and spaces would add tokens.
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=str)


class TiktokenCounter:
    """Counts with one tiktoken encoding, and media by one provider rule (app/tokens/media);
    implements the `TokenCounter` Protocol."""

    def __init__(self, encoding: tiktoken.Encoding, media: MediaRule | None = None) -> None:
        self._encoding = encoding
        self._media = media or media_rules()[DEFAULT_MEDIA_RULE]
        self._encode = encoding.encode_ordinary
        # Shared by the counters of an encoding (`with_media`), and used from threads too.
        self._long_counts: TextKeyedLRU[str, int] = TextKeyedLRU(CACHE_MAX_CHARS)
        # The pieces of the last long text encoded (one slot, shared the same way; replaced
        # whole, so a thread reads either the old or the new one).
        self._last_pieces: list[_Pieces | None] = [None]
        # Roles and names repeat in every message: count each distinct one once.
        self._short_counts: dict[str, int] = {}

    @property
    def encoding_name(self) -> str:
        return self._encoding.name

    @property
    def media_rule(self) -> MediaRule:
        return self._media

    def with_media(self, media: MediaRule) -> Self:
        """This counter with another media rule, sharing its text-count caches."""
        other = copy.copy(self)
        other._media = media
        return other

    def count_text(self, text: str) -> int:
        if len(text) < CACHE_MIN_CHARS:
            return len(self._encode(text)) if text else 0
        count = self._long_counts.get(text)
        if count is None:
            count = self._encoded_length(text)  # outside the lock: tiktoken releases the GIL
            self._long_counts.put(text, count, len(text))
        return count

    def _encoded_length(self, text: str) -> int:
        """The sum of the text's pieces' tokens, the pieces it shares with the last long text
        encoded taken from there (the same count, piece for piece: see `_Pieces.shared`)."""
        starts, before = [0], [0]
        last = self._last_pieces[0]
        if last is not None and len(text) >= REUSE_MIN_CHARS:
            shared = last.shared(text)
            starts, before = last.starts[: shared + 1], last.before[: shared + 1]
        count, start = before[-1], starts[-1]
        while len(text) - start > LONG_TEXT_CHARS:
            end = _piece_end(text, start)
            count += len(self._encode(text[start:end]))
            start = end
            starts.append(start)
            before.append(count)
        if len(text) >= REUSE_MIN_CHARS:
            self._last_pieces[0] = _Pieces(text, starts, before)
        return count + len(self._encode(text[start:]))

    def clear_cache(self) -> None:
        """Forget remembered counts and pieces (benchmarks measure cold counting with it)."""
        self._long_counts.clear()
        self._last_pieces[0] = None

    def count_content(self, content: Content) -> int:
        """Tokens of a message body (string or blocks), including per-block overhead."""
        if isinstance(content, str):
            return self.count_text(content)
        return sum(self._count_block(block) for block in content)

    def _count_block(self, block: Any) -> int:
        if not isinstance(block, Mapping):
            return TOKENS_PER_BLOCK + self.count_text(_json(block))
        kind = block.get("type")
        if kind == "text":
            body = self.count_text(str(block.get("text", "")))
        elif kind == "tool_use":
            body = self._short(str(block.get("name", ""))) + self.count_text(
                _json(block.get("input", {}))
            )
        elif kind == "tool_result":
            nested = block.get("content", "")
            body = self.count_content(nested) if isinstance(nested, str | list) else 0
        elif kind in MEDIA_BLOCK_TYPES and (media := self.count_media(block)) is not None:
            body = media.tokens
        else:
            body = self.count_text(_json(block))
        return TOKENS_PER_BLOCK + body

    def _short(self, text: str) -> int:
        """Count of a short, repeating string (role, name), memoised."""
        count = self._short_counts.get(text)
        if count is None:
            count = self.count_text(text)
            if len(self._short_counts) < 10_000:  # bounded: names are client-controlled
                self._short_counts[text] = count
        return count

    def count_media(self, block: Mapping[str, Any]) -> MediaCount | None:
        """An image, document or audio block counted as the provider bills it (None when the
        block is not media)."""
        return count_media(block, self._media, self.count_text)

    def count_message(self, message: MessageFields) -> int:
        """Tokens of one message: content + framing + role/name + tool traffic.

        The one rule for a message: the append path stores it, `POST /count-tokens` and the
        CLI sum it, the engine counts a system prompt sent as a message with it.
        """
        tokens = TOKENS_PER_MESSAGE + self._short(message.role)
        if message.content:
            tokens += self.count_content(message.content)
        if message.name:
            tokens += TOKENS_PER_NAME + self._short(message.name)
        for call in message.tool_calls or ():
            function = call.get("function")
            if isinstance(function, Mapping):
                tokens += self._short(str(function.get("name", "")))
                tokens += self.count_text(str(function.get("arguments", "")))
            else:  # non-function tool call types: measure what was posted
                tokens += self.count_text(_json(call))
            tokens += TOKENS_PER_TOOL_CALL
        if message.tool_call_id:
            tokens += self.count_text(message.tool_call_id)
        return tokens

    def count_tools(self, tools: Sequence[Mapping[str, Any]]) -> int:
        """Tokens of tool definitions: their compact JSON plus a per-tool framing estimate.

        The one rule for tools: `POST /count-tokens` and the context's `usage.tools_tokens`
        (over the tools as rendered for the requested format) both use it.
        """
        return sum(TOKENS_PER_TOOL + self.count_text(_json(tool)) for tool in tools)


def _piece_end(text: str, start: int) -> int:
    """Where the piece of `text` from `start` ends: before the first space past PIECE_CHARS
    that follows a non-blank, else at PIECE_CHARS. Reads at most LONG_TEXT_CHARS."""
    limit = start + LONG_TEXT_CHARS
    space = text.find(" ", start + PIECE_CHARS, limit)
    while space >= 0:
        if not text[space - 1].isspace():
            return space
        blank_run_end = _NON_BLANK.search(text, space, limit)
        if blank_run_end is None:
            break
        space = text.find(" ", blank_run_end.start(), limit)
    return start + PIECE_CHARS


@functools.cache
def counter_for_encoding(encoding_name: str) -> TiktokenCounter:
    return TiktokenCounter(get_encoding(encoding_name))


@functools.cache
def _counter(encoding_name: str, media_rule: str) -> TiktokenCounter:
    return counter_for_encoding(encoding_name).with_media(media_rules()[media_rule])


def counter_for(model: ModelInfo) -> TiktokenCounter:
    """The shared counter for `model`'s encoding and media rule (the text caches are one per
    encoding per process)."""
    return _counter(model.encoding, model.media)
