"""Old media as a cheap tier: images, documents and audio replaced in what is sent by a short
text placeholder naming what was there and which stored message holds it. The stored message
is unchanged; `prune.prune_history` decides which messages (older than the newest
`keep_media` media, with the same hysteresis as pruning).

A placeholder is a `text` block where the media block was (inside a tool result too), so it
is valid in every format and a tool result keeps its id and place.
"""

from __future__ import annotations

from typing import Any

from app.core.content import Block, Content
from app.engine.types import Message
from app.tokens.base import TokenCounter
from app.tokens.media.blocks import MEDIA_BLOCK_TYPES, media_blocks


def media_count(message: Message) -> int:
    """How many media blocks `message` carries (in tool results too)."""
    content = message.content
    return 0 if isinstance(content, str) else sum(1 for _ in media_blocks(content))


def media_tokens(message: Message, counter: TokenCounter) -> int:
    """What the media blocks of `message` cost (0 for a string: most messages)."""
    content = message.content
    if isinstance(content, str):
        return 0
    counts = (counter.count_media(block) for _, block in media_blocks(content))
    return sum(count.tokens for count in counts if count is not None)


def placeholder_text(label: str, tokens: int, seq: int) -> str:
    return f"[{label} ({tokens:,} tokens) left out to save context; stored in message #{seq}]"


def without_media(content: Content, counter: TokenCounter, seq: int) -> Content:
    """`content` with every media block replaced by its placeholder (copies on the way only)."""
    if isinstance(content, str):
        return content
    return [_replaced(block, counter, seq) for block in content]


def _replaced(block: Block, counter: TokenCounter, seq: int) -> Block:
    kind = block.get("type")
    if kind in MEDIA_BLOCK_TYPES:
        count = counter.count_media(block)
        if count is not None:
            return {"type": "text", "text": placeholder_text(count.label, count.tokens, seq)}
    if kind == "tool_result" and isinstance(block.get("content"), list):
        nested: Any = without_media(block["content"], counter, seq)
        return {**block, "content": nested}
    return block
