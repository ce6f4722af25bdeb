"""Messages as entries: (role, Anthropic-style blocks, source), the form every provider
format is rendered from (app/engine/render.py, and responses.py for Responses items), with
the engine-internal keys that remember how a message was posted."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from app.core.content import Block
from app.engine.compaction import is_opaque
from app.engine.gemini_in import GEMINI_THOUGHT
from app.engine.types import Message

EMPTY_RESULT_TEXT = "(no output)"
# Private reasoning (with its signature) is only valid sent back to Anthropic as a block.
THINKING: frozenset[str] = frozenset({"thinking", "redacted_thinking"})
# A Responses reasoning item (its encrypted_content) is only valid sent back to OpenAI's
# Responses API.
REASONING = "reasoning"
# Gemini's thoughts (with their signatures) likewise go back to Gemini only.
DROPPED_IN_OPENAI: frozenset[str] = THINKING | {REASONING, GEMINI_THOUGHT}
DROPPED_IN_ANTHROPIC: frozenset[str] = frozenset({REASONING, GEMINI_THOUGHT})
DROPPED_IN_RESPONSES: frozenset[str] = THINKING | {GEMINI_THOUGHT}
DROPPED_IN_GEMINI: frozenset[str] = THINKING | {REASONING}
# Engine-internal block keys, removed before anything is sent.
INTERNAL_STRING = "_string"
INTERNAL_ARGUMENTS = "_arguments"
# The `id` / `status` a Responses item was posted with, on the block it became.
INTERNAL_ITEM = "_item"
ITEM_KEYS = ("id", "status")
# (role, Anthropic-style blocks, source: stored message id or a SYNTHETIC tag)
Entry = tuple[str, list[Block], str]


def text_block(text: str) -> Block:
    return {"type": "text", "text": text}


def as_entry(message: Message) -> Entry:
    """One message as (role, Anthropic-style blocks, source), calls as tool_use blocks."""
    posted = _posted_items(message)
    if message.role == "tool":
        result: dict[str, Any] = {"type": "tool_result", "tool_use_id": message.tool_call_id}
        if "output" in posted:
            result[INTERNAL_ITEM] = posted["output"]
        return "user", [{**result, "content": message.content}], message.id
    content = message.content
    if isinstance(content, str):  # remembered so anthropic sends it back as a string
        blocks = [{**text_block(content), INTERNAL_STRING: True}]
    else:
        blocks = [dict(b) for b in content]
        for position, block in enumerate(blocks):
            if position in posted:
                block[INTERNAL_ITEM] = posted[position]
    blocks = [
        b for b in blocks if not (b.get("type") == "text" and not str(b.get("text", "")).strip())
    ]
    for call in message.tool_calls or ():
        raw_function = call.get("function")
        function: Mapping[str, Any] = raw_function if isinstance(raw_function, Mapping) else {}
        arguments = str(function.get("arguments", "") or "")
        try:
            parsed = json.loads(arguments) if arguments else {}
        except ValueError:
            parsed = None
        tool_input = parsed if isinstance(parsed, dict) else {"_raw": arguments}
        blocks.append(
            {
                "type": "tool_use",
                "id": call.get("id"),
                "name": function.get("name", ""),
                "input": tool_input,
                INTERNAL_ARGUMENTS: arguments,
            }
        )
        if call.get("id") in posted:
            blocks[-1][INTERNAL_ITEM] = posted[call["id"]]
    return ("user" if message.role == "system" else message.role), blocks, message.id


def _posted_items(message: Message) -> dict[Any, dict[str, Any]]:
    """`id` / `status` of the Responses items a message was posted as (app/engine/items.py),
    by where they went: a call id, a content position, or "output" for a tool message."""
    extra = message.metadata.get("extra")
    records = extra.get("items") if isinstance(extra, Mapping) else None
    found: dict[Any, dict[str, Any]] = {}
    for record in records if isinstance(records, list) else ():
        keys = {k: record[k] for k in ITEM_KEYS if isinstance(record, Mapping) and k in record}
        if not keys:
            continue
        if record.get("type") == "function_call_output":
            found["output"] = keys
        elif isinstance(record.get("call_id"), str):
            found[record["call_id"]] = keys
        elif isinstance(record.get("block"), int):
            found[record["block"]] = keys
    return found


def without(
    entries: list[Entry], dropped: frozenset[str], *, opaque_compactions: bool = True
) -> list[Entry]:
    """Entries without the blocks a format cannot carry (those of a `dropped` type, and a
    Responses compaction item unless `opaque_compactions` is False: only openai_responses
    carries one); an entry left empty is left out."""
    out: list[Entry] = []
    for role, blocks, source in entries:
        kept = [
            b
            for b in blocks
            if b.get("type") not in dropped and not (opaque_compactions and is_opaque(b))
        ]
        if kept:
            out.append((role, kept if len(kept) < len(blocks) else blocks, source))
    return out


def image_url(block: Block) -> str | None:
    source = block.get("source")
    if not isinstance(source, Mapping):
        return None
    if source.get("type") == "url" and source.get("url"):
        return str(source["url"])
    if source.get("type") == "base64" and source.get("data"):
        return f"data:{source.get('media_type', 'image/png')};base64,{source['data']}"
    return None
