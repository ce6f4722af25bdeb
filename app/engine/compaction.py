"""Provider compaction: what a compaction the provider made covers, in each format (SPEC §13).

Two kinds are stored verbatim, both `{"type": "compaction", …}`:
- a Responses compaction item (app/engine/items.py; `encrypted_content`, no `content`): opaque.
  Only `openai_responses` carries it, and there it stands for everything before it;
- an Anthropic compaction block (`content`: the summary text; null for a failed compaction,
  which the Messages API treats as a no-op): readable, so every format honours it —
  `anthropic` and `raw` send the block, the others its text as a summary note (text.py).

A context starts at the latest compaction its format honours (`compaction_floor`): the
messages before it are neither sent nor counted (explain: `compacted`), nor are the blocks
before it in its own message. An opaque item keeps the user messages right before it
(`window_start`): the output of `responses.compact` is the conversation's user messages, then
the item, and the Agents SDK's compaction session stores and sends it so. Foldwise's fold
never summarizes across an opaque compaction (it cannot read it): that context is fitted by
pruning and leaving out turns after it, the compaction held like the pinned message.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from app.engine.types import Message
from app.engine.units import rebuild
from app.tokens.base import TokenCounter

COMPACTION = "compaction"


def is_opaque(block: Mapping[str, Any]) -> bool:
    """A Responses compaction item (as a stored block)."""
    return block.get("type") == COMPACTION and "content" not in block


def summary_text(block: Mapping[str, Any]) -> str | None:
    """An Anthropic compaction block's summary, or None (not one, or a failed compaction)."""
    if block.get("type") != COMPACTION or "content" not in block:
        return None
    content = block["content"]
    return content if isinstance(content, str) and content.strip() else None


def _honoured(block: Any, fmt: str) -> bool:
    if not isinstance(block, Mapping) or block.get("type") != COMPACTION:
        return False
    return fmt == "openai_responses" if is_opaque(block) else summary_text(block) is not None


def _last_honoured(message: Message, fmt: str) -> int | None:
    content = message.content
    if isinstance(content, str):
        return None
    found = [i for i, block in enumerate(content) if _honoured(block, fmt)]
    return found[-1] if found else None


def compaction_floor(messages: Sequence[Message], fmt: str) -> int | None:
    """Index in `messages` (seq order) of the message holding the latest compaction `fmt`
    honours, or None."""
    for index in range(len(messages) - 1, -1, -1):
        if _last_honoured(messages[index], fmt) is not None:
            return index
    return None


def from_compaction(message: Message, fmt: str, counter: TokenCounter) -> Message:
    """`message` from its latest honoured compaction block on (the provider reads nothing
    before it), counted; the message itself when the block is its first."""
    start = _last_honoured(message, fmt)
    if not start or isinstance(message.content, str):
        return message
    content = message.content[start:]
    return rebuild(message, counter, content, [dict(c) for c in message.tool_calls or ()])


def window_start(messages: Sequence[Message], floor: int) -> int:
    """Where the window of the opaque compaction at `floor` starts: `responses.compact`
    returns the user messages of the compacted conversation, then the item, and the API
    expects them together, so the run of user messages right before the item is kept."""
    start = floor
    while start > 0 and messages[start - 1].role == "user" and not messages[start - 1].result_ids:
        start -= 1
    return start


def opaque_at(message: Message, fmt: str) -> bool:
    """Whether the compaction `message` starts with (after `from_compaction`) is opaque."""
    start = _last_honoured(message, fmt)
    content = message.content
    return start is not None and not isinstance(content, str) and is_opaque(content[start])
