"""Recursive-overflow protection: split a span too large for one summarizer call into chunks.

The fold then runs previous summary + chunk 1 → s1, s1 + chunk 2 → s2, …, so the model sees
every message, in order. A single message larger than a chunk is cut to fit (with a marker):
it is still seen, never skipped.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from app.engine.text import message_text
from app.engine.types import Message
from app.summarizers.prompts import render_transcript
from app.summarizers.rule.render import truncate_to_tokens
from app.tokens.base import TokenCounter

# The instructions around the transcript (system prompt, tags, section list) are ≈ 400 tokens
# with cl100k; 600 leaves room for the focus text and tokenizer differences.
PROMPT_OVERHEAD_TOKENS = 600
# Never plan chunks smaller than this, even when the summary budget eats most of the input.
MIN_CHUNK_TOKENS = 500


def chunk_budget(input_tokens: int, max_summary_tokens: int, instruction_tokens: int = 0) -> int:
    """Transcript tokens one call may carry: input limit − previous summary − prompt (a
    template's instruction, `instruction_tokens`, on top of the built-in overhead)."""
    room = input_tokens - max_summary_tokens - PROMPT_OVERHEAD_TOKENS - instruction_tokens
    return max(room, MIN_CHUNK_TOKENS)


def plan_chunks(
    messages: Sequence[Message], budget: int, counter: TokenCounter
) -> list[list[Message]]:
    """Consecutive groups whose rendered transcript fits `budget` tokens; order preserved."""
    chunks: list[list[Message]] = []
    current: list[Message] = []
    used = 0
    for message in messages:
        size = counter.count_text(render_transcript([message])) + 2  # blank line between blocks
        if size > budget:
            message = _cut(message, budget, counter)
            size = budget
        if current and used + size > budget:
            chunks.append(current)
            current, used = [], 0
        current.append(message)
        used += size
    if current:
        chunks.append(current)
    return chunks


def _cut(message: Message, budget: int, counter: TokenCounter) -> Message:
    """The message reduced to plain text of at most `budget` tokens (header included)."""
    header = counter.count_text(render_transcript([replace(message, content="")])) + 8
    text = truncate_to_tokens(message_text(message), max(budget - header, 1), counter)
    return replace(message, content=f"{text}\n[message cut to fit one summarizer call]")
