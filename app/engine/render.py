"""Render the kept messages for a provider: `anthropic`, `openai` or `raw` (SPEC §10).

Both provider formats go through one intermediate form: a list of (role, Anthropic-style
blocks). Tool results are moved to right after the assistant message that made the call (a
provider rejects them anywhere else), then:

- anthropic: top-level `system`; consecutive same-role messages merged so roles alternate;
  tool results first in their user message; a history starting with an assistant message gets
  a minimal user message first (CONTINUATION_TEXT), as the Messages API requires;
- openai: system prompt (with the summary when placed there) is `messages[0]`, top-level system
  is None; tool results become `role: tool` messages right after their assistant message.
- raw: the stored messages as dicts, system top-level.

Stored `system` messages in the middle of a history become user notes (see `as_user_note`),
applied before counting so the note's prefix is paid for; they keep their position, which a
move into the top-level system would lose.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from app.engine.budget import SummaryPlacement
from app.engine.text import block_text, content_text
from app.engine.types import Block, Message
from app.engine.units import rebuild
from app.tokens.base import TokenCounter

Format = Literal["anthropic", "openai", "raw"]

SUMMARY_HEADER = "Summary of earlier conversation:\n"
SUMMARY_PAIR_HEADER = "[Summary of earlier conversation]\n"
SUMMARY_ACK = "Understood."
CONTINUATION_TEXT = "(conversation continues)"
SYSTEM_NOTE_PREFIX = "[system] "
EMPTY_RESULT_TEXT = "(no output)"


@dataclass(frozen=True, slots=True)
class Rendered:
    system: str | None
    messages: list[dict[str, Any]]
    tools: list[dict[str, Any]] | None


def system_text(
    system_prompt: str | None, summary: str | None, placement: SummaryPlacement
) -> str | None:
    if not summary or placement != "system":
        return system_prompt or None
    section = SUMMARY_HEADER + summary
    return f"{system_prompt}\n\n{section}" if system_prompt else section


def summary_pair(summary: str) -> tuple[str, str]:
    return SUMMARY_PAIR_HEADER + summary, SUMMARY_ACK


def as_user_note(message: Message, counter: TokenCounter) -> Message:
    """A stored `system` message mid-history, as a user message with a visible prefix."""
    if message.role != "system":
        return message
    text = SYSTEM_NOTE_PREFIX + content_text(message.content)
    return dataclasses.replace(rebuild(message, counter, text), role="user")


def render_tools(
    tools: Sequence[Mapping[str, Any]] | None, fmt: Format
) -> list[dict[str, Any]] | None:
    if not tools:
        return None
    rendered = []
    for tool in tools:
        function = tool.get("function")
        if fmt == "anthropic" and tool.get("type") == "function" and isinstance(function, Mapping):
            rendered.append(
                {
                    "name": function.get("name"),
                    "description": function.get("description", ""),
                    "input_schema": function.get(
                        "parameters", {"type": "object", "properties": {}}
                    ),
                }
            )
        elif fmt == "openai" and "input_schema" in tool:
            spec = {"name": tool.get("name"), "description": tool.get("description", "")}
            rendered.append(
                {"type": "function", "function": {**spec, "parameters": tool["input_schema"]}}
            )
        else:
            rendered.append(dict(tool))
    return rendered


def render(
    messages: Sequence[Message],
    fmt: Format,
    *,
    system_prompt: str | None,
    summary: str | None,
    placement: SummaryPlacement,
    tools: Sequence[Mapping[str, Any]] | None,
) -> Rendered:
    system = system_text(system_prompt, summary, placement)
    pair = summary_pair(summary) if summary and placement == "messages" else None
    rendered_tools = render_tools(tools, fmt)
    if fmt == "raw":
        prefix = (
            [{"role": "user", "content": pair[0]}, {"role": "assistant", "content": pair[1]}]
            if pair
            else []
        )
        return Rendered(system, prefix + [_raw(m) for m in messages], rendered_tools)
    entries: list[tuple[str, list[Block]]] = []
    if pair:
        entries += [("user", [_text(pair[0])]), ("assistant", [_text(pair[1])])]
    entries += _relocate_results([_entry(m) for m in messages])
    if fmt == "anthropic":
        return Rendered(system, _anthropic(entries), rendered_tools)
    head = [{"role": "system", "content": system}] if system else []
    return Rendered(None, head + _openai(entries), rendered_tools)


def _raw(message: Message) -> dict[str, Any]:
    out: dict[str, Any] = {"role": message.role, "content": message.content}
    if message.name:
        out["name"] = message.name
    if message.tool_calls:
        out["tool_calls"] = [dict(c) for c in message.tool_calls]
    if message.tool_call_id:
        out["tool_call_id"] = message.tool_call_id
    return out


def _text(text: str) -> Block:
    return {"type": "text", "text": text}


def _entry(message: Message) -> tuple[str, list[Block]]:
    if message.role == "tool":
        return "user", [
            {"type": "tool_result", "tool_use_id": message.tool_call_id, "content": message.content}
        ]
    content = message.content
    blocks = [_text(content)] if isinstance(content, str) else [dict(b) for b in content]
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
                "_arguments": arguments,
            }
        )
    return ("user" if message.role == "system" else message.role), blocks


def _relocate_results(entries: list[tuple[str, list[Block]]]) -> list[tuple[str, list[Block]]]:
    """Tool results right after the assistant entry that issued their calls."""
    results: dict[str, Block] = {}
    for _, blocks in entries:
        for block in blocks:
            if block.get("type") == "tool_result":
                results.setdefault(str(block.get("tool_use_id")), block)
    out: list[tuple[str, list[Block]]] = []
    for role, blocks in entries:
        rest = [b for b in blocks if b.get("type") != "tool_result"]
        if rest:
            out.append((role, rest))
        answers = [
            results[str(b.get("id"))]
            for b in rest
            if b.get("type") == "tool_use" and str(b.get("id")) in results
        ]
        if answers:
            out.append(("user", answers))
    return out


def _anthropic(entries: list[tuple[str, list[Block]]]) -> list[dict[str, Any]]:
    merged: list[tuple[str, list[Block]]] = []
    for role, blocks in entries:
        clean = [_anthropic_block(b) for b in blocks]
        if merged and merged[-1][0] == role:
            merged[-1][1].extend(clean)
        else:
            merged.append((role, clean))
    if merged and merged[0][0] != "user":
        merged.insert(0, ("user", [_text(CONTINUATION_TEXT)]))
    out = []
    for role, blocks in merged:
        blocks.sort(key=lambda b: b.get("type") != "tool_result")  # results first (stable)
        only_text = len(blocks) == 1 and blocks[0].get("type") == "text"
        out.append({"role": role, "content": blocks[0]["text"] if only_text else blocks})
    return out


def _anthropic_block(block: Block) -> Block:
    """Drop engine-internal keys; OpenAI `image_url` parts become Anthropic image blocks."""
    clean = {k: v for k, v in block.items() if k != "_arguments"}
    image = clean.get("image_url")
    if clean.get("type") != "image_url" or not isinstance(image, Mapping):
        return clean
    url = str(image.get("url", ""))
    if url.startswith("data:") and ";base64," in url:
        media_type, data = url[len("data:") :].split(";base64,", 1)
        return {
            "type": "image",
            "source": {"type": "base64", "media_type": media_type, "data": data},
        }
    return {"type": "image", "source": {"type": "url", "url": url}}


def _openai(entries: list[tuple[str, list[Block]]]) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for role, blocks in entries:
        if role == "assistant":
            calls = [
                {
                    "id": b.get("id"),
                    "type": "function",
                    "function": {
                        "name": b.get("name", ""),
                        "arguments": b.get("_arguments")
                        or json.dumps(b.get("input", {}), ensure_ascii=False),
                    },
                }
                for b in blocks
                if b.get("type") == "tool_use"
            ]
            text = "\n".join(block_text(b) for b in blocks if b.get("type") != "tool_use")
            message: dict[str, Any] = {"role": "assistant", "content": text or None}
            if calls:
                message["tool_calls"] = calls
            out.append(message)
            continue
        for block in blocks:
            if block.get("type") == "tool_result":
                text = content_text(block.get("content", ""))
                text = text if text.strip() else EMPTY_RESULT_TEXT
                out.append(
                    {"role": "tool", "tool_call_id": block.get("tool_use_id"), "content": text}
                )
        rest = [b for b in blocks if b.get("type") != "tool_result"]
        if rest:
            out.append({"role": "user", "content": _openai_user_content(rest)})
    return out


def _openai_user_content(blocks: list[Block]) -> str | list[dict[str, Any]]:
    if all(b.get("type") == "text" for b in blocks):
        return "\n".join(str(b.get("text", "")) for b in blocks)
    parts: list[dict[str, Any]] = []
    for block in blocks:
        kind = block.get("type")
        url = _image_url(block) if kind == "image" else None
        if kind == "image_url":
            parts.append(dict(block))
        elif url:
            parts.append({"type": "image_url", "image_url": {"url": url}})
        else:
            parts.append({"type": "text", "text": block_text(block) or f"[{kind}]"})
    return parts


def _image_url(block: Block) -> str | None:
    source = block.get("source")
    if not isinstance(source, Mapping):
        return None
    if source.get("type") == "url" and source.get("url"):
        return str(source["url"])
    if source.get("type") == "base64" and source.get("data"):
        return f"data:{source.get('media_type', 'image/png')};base64,{source['data']}"
    return None
