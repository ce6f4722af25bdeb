"""Render the kept messages for a provider: `anthropic`, `openai` or `raw`
(docs/reference.md §Assembly).

Both provider formats go through one intermediate form: a list of (role, Anthropic-style
blocks). Tool results are moved to right after the assistant message that made the call (a
provider rejects them anywhere else), then:

- anthropic: top-level `system`; one output message per stored message, never merged (the
  Messages API combines consecutive same-role turns itself), block lists and `thinking` /
  `redacted_thinking` blocks byte-for-byte as stored; tool results first in their user
  message; a history starting with an assistant message gets a minimal user message first
  (CONTINUATION_TEXT), as the Messages API requires;
- openai: system prompt (with the summary when placed there) is `messages[0]`, top-level system
  is None; tool results become `role: tool` messages right after their assistant message (an
  Anthropic user message carrying N results becomes N `tool` messages: the format has no
  other way); blocks the format cannot carry (DROPPED_IN_OPENAI) are dropped, never text.
- openai_responses: OpenAI Responses input items (app/engine/responses.py); top-level
  `system` is the `instructions` string; one stored message may become several items;
- gemini: Gemini `contents` (app/engine/gemini_out.py); top-level `system` is the string for
  the request's `systemInstruction`; one content per stored message;
- raw: the stored messages as dicts, system top-level.

Reasoning items of the Responses API (stored as `reasoning` blocks) are carried only in
openai_responses; Anthropic `thinking` blocks only in anthropic. Elsewhere both are dropped,
never turned into text, and a message holding nothing else is left out.

`Rendered.sources` names where each output message comes from: a stored message id, or one of
the SYNTHETIC tags for a message Foldwise adds (flagged in `explain`).

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

from app.core.content import Block
from app.core.context_settings import SummaryPlacement
from app.engine.entries import (
    DROPPED_IN_ANTHROPIC,
    DROPPED_IN_GEMINI,
    DROPPED_IN_OPENAI,
    DROPPED_IN_RESPONSES,
    EMPTY_RESULT_TEXT,
    INTERNAL_ARGUMENTS,
    INTERNAL_ITEM,
    INTERNAL_STRING,
    Entry,
    as_entry,
    text_block,
    without,
)
from app.engine.gemini_in import GEMINI_KEY
from app.engine.gemini_out import to_contents
from app.engine.gemini_tools import (
    DECLARATION_KEYS,
    declaration_schema,
    declarations,
    gemini_tools,
    is_gemini_tool,
)
from app.engine.parts import placeholder, to_anthropic, to_chat
from app.engine.responses import to_items
from app.engine.text import block_text, content_text
from app.engine.types import Message
from app.engine.units import rebuild
from app.tokens.base import TokenCounter

Format = Literal["anthropic", "openai", "openai_responses", "gemini", "raw"]

SUMMARY_HEADER = "Summary of earlier conversation:\n"
SUMMARY_PAIR_HEADER = "[Summary of earlier conversation]\n"
SUMMARY_ACK = "Understood."
CONTINUATION_TEXT = "(conversation continues)"
SYSTEM_NOTE_PREFIX = "[system] "
# Sources of output messages Foldwise adds itself (not stored messages).
SYNTHETIC_SYSTEM = "system"
SYNTHETIC_SUMMARY = "summary"
SYNTHETIC_SUMMARY_ACK = "summary_ack"
SYNTHETIC_CONTINUATION = "continuation"
SYNTHETIC: frozenset[str] = frozenset(
    {SYNTHETIC_SYSTEM, SYNTHETIC_SUMMARY, SYNTHETIC_SUMMARY_ACK, SYNTHETIC_CONTINUATION}
)


@dataclass(frozen=True, slots=True)
class SystemParts:
    """The system text in its two parts: the system prompt, the same until the settings change,
    and the summary section (placement `system`), new at each fold. Kept apart so a provider's
    cache can keep the prompt (with the tools before it) across a fold."""

    prompt: str | None = None
    summary: str | None = None
    """The section as sent: after a system prompt it starts with the blank line between them."""

    @property
    def text(self) -> str | None:
        """The parts joined: the system sent as one string."""
        return (self.prompt or "") + (self.summary or "") or None


@dataclass(frozen=True, slots=True)
class Rendered:
    system: str | None
    messages: list[dict[str, Any]]
    tools: list[dict[str, Any]] | None
    sources: list[str] = dataclasses.field(default_factory=list)
    """Per output message: the stored message id it renders, or a SYNTHETIC tag."""
    system_parts: SystemParts = SystemParts()
    """`system` (openai: the system message's content) in its parts."""
    merged: dict[str, tuple[str, ...]] = dataclasses.field(default_factory=dict)
    """gemini: source → the later sources whose messages its output message also carries."""


def summary_section(system_prompt: str | None, summary: str) -> str:
    """The summary's text in the system, as sent and counted (the separator included)."""
    return ("\n\n" if system_prompt else "") + SUMMARY_HEADER + summary


def system_parts(
    system_prompt: str | None, summary: str | None, placement: SummaryPlacement
) -> SystemParts:
    in_system = (
        summary_section(system_prompt, summary) if summary and placement == "system" else None
    )
    return SystemParts(system_prompt or None, in_system)


def summary_pair(summary: str) -> tuple[str, str]:
    return SUMMARY_PAIR_HEADER + summary, SUMMARY_ACK


def as_user_note(message: Message, counter: TokenCounter) -> Message:
    """A stored `system` message mid-history, as a user message with a visible prefix."""
    if message.role != "system":
        return message
    text = SYSTEM_NOTE_PREFIX + content_text(message.content)
    return dataclasses.replace(rebuild(message, counter, text), role="user")


def _function_spec(tool: Mapping[str, Any]) -> dict[str, Any] | None:
    """name, description, parameters (+ strict) of a client function tool in any of the three
    shapes: Anthropic (`input_schema`), Chat (nested `function`), Responses (flat `function`).
    None for a provider server tool, which is sent as posted."""
    function = tool.get("function")
    if tool.get("type") == "function" and isinstance(function, Mapping):
        source, schema = function, function.get("parameters")
    elif tool.get("type") == "function" and "name" in tool:
        source, schema = tool, tool.get("parameters")
    elif "input_schema" in tool:
        source, schema = tool, tool["input_schema"]
    else:
        return None
    spec = {
        "name": source.get("name"),
        "description": source.get("description", ""),
        "parameters": schema if schema is not None else {"type": "object", "properties": {}},
    }
    if "strict" in source:
        spec["strict"] = source["strict"]
    return spec


def render_tool(tool: Mapping[str, Any], fmt: Format) -> dict[str, Any]:
    spec = _function_spec(tool)
    if spec is None or fmt == "raw" or ("input_schema" in tool and fmt == "anthropic"):
        return dict(tool)
    if fmt == "anthropic":
        return {
            "name": spec["name"],
            "description": spec["description"],
            "input_schema": spec["parameters"],
        }
    if fmt == "openai":
        if isinstance(tool.get("function"), Mapping):
            return dict(tool)
        return {"type": "function", "function": spec}
    if tool.get("type") == "function" and not isinstance(tool.get("function"), Mapping):
        return dict(tool)  # already a Responses function tool
    # Responses reads a missing `strict` as "strict when possible"; Chat and Anthropic tools
    # are strict only when they say so, which an explicit value keeps.
    return {"type": "function", **spec, "strict": spec.get("strict") is True}


def render_tools(
    tools: Sequence[Mapping[str, Any]] | None, fmt: Format
) -> list[dict[str, Any]] | None:
    """The tools in `fmt`'s shape: Gemini's function declarations are one tool there and a tool
    each elsewhere; a server tool goes only to its own provider (`dropped_tools`)."""
    if not tools:
        return None
    if fmt == "raw":
        return [dict(tool) for tool in tools]
    if fmt == "gemini":
        return gemini_tools([_function_spec(tool) for tool in tools], tools) or None
    out: list[dict[str, Any]] = []
    for tool in tools:
        if is_gemini_tool(tool):
            out += [render_tool(_as_function(d), fmt) for d in declarations(tool)]
        else:
            out.append(render_tool(tool, fmt))
    return out or None


def _as_function(declaration: Mapping[str, Any]) -> dict[str, Any]:
    """A Gemini function declaration as a (Responses-shaped) function tool."""
    return {
        "type": "function",
        "name": declaration.get("name"),
        "description": declaration.get("description", ""),
        "parameters": declaration_schema(declaration),
        "strict": False,
    }


def dropped_tools(tools: Sequence[Mapping[str, Any]] | None, fmt: Format) -> list[str]:
    """A warning per server tool `fmt` cannot carry (Gemini's elsewhere, others' in Gemini)."""
    if fmt == "raw":
        return []
    warnings = []
    for tool in tools or ():
        gemini = is_gemini_tool(tool)
        if gemini and fmt != "gemini":
            kinds = [k for k in tool if k not in DECLARATION_KEYS]
        elif not gemini and fmt == "gemini" and _function_spec(tool) is None:
            kinds = [str(tool.get("type") or tool.get("name"))]
        else:
            continue
        warnings += [f"tool {kind} cannot be sent in format={fmt}: left out" for kind in kinds]
    return warnings


def render(
    messages: Sequence[Message],
    fmt: Format,
    *,
    system_prompt: str | None,
    summary: str | None,
    placement: SummaryPlacement,
    tools: Sequence[Mapping[str, Any]] | None,
) -> Rendered:
    parts = system_parts(system_prompt, summary, placement)
    system = parts.text
    pair = summary_pair(summary) if summary and placement == "messages" else None
    rendered_tools = render_tools(tools, fmt)
    if fmt == "raw":
        prefix = (
            [{"role": "user", "content": pair[0]}, {"role": "assistant", "content": pair[1]}]
            if pair
            else []
        )
        sources = [SYNTHETIC_SUMMARY, SYNTHETIC_SUMMARY_ACK] if pair else []
        return Rendered(
            system,
            prefix + [_raw(m) for m in messages],
            rendered_tools,
            sources + [m.id for m in messages],
            parts,
        )
    entries: list[Entry] = []
    if pair:
        entries += [
            ("user", [text_block(pair[0])], SYNTHETIC_SUMMARY),
            ("assistant", [text_block(pair[1])], SYNTHETIC_SUMMARY_ACK),
        ]
    entries += _relocate_results([as_entry(m) for m in messages])
    if fmt == "anthropic":
        out = _anthropic(without(entries, DROPPED_IN_ANTHROPIC))
        return Rendered(system, [m for m, _ in out], rendered_tools, [s for _, s in out], parts)
    if fmt == "openai_responses":
        out = to_items(without(entries, DROPPED_IN_RESPONSES, opaque_compactions=False))
        return Rendered(system, [m for m, _ in out], rendered_tools, [s for _, s in out], parts)
    if fmt == "gemini":
        continuation = (CONTINUATION_TEXT, SYNTHETIC_CONTINUATION)
        out, merged = to_contents(without(entries, DROPPED_IN_GEMINI), continuation)
        contents, sources = [c for c, _ in out], [s for _, s in out]
        return Rendered(system, contents, rendered_tools, sources, parts, merged)
    head = [({"role": "system", "content": system}, SYNTHETIC_SYSTEM)] if system else []
    out = head + _openai(entries)
    return Rendered(None, [m for m, _ in out], rendered_tools, [s for _, s in out], parts)


def _raw(message: Message) -> dict[str, Any]:
    out: dict[str, Any] = {"role": message.role, "content": message.content}
    if message.name:
        out["name"] = message.name
    if message.tool_calls:
        out["tool_calls"] = [dict(c) for c in message.tool_calls]
    if message.tool_call_id:
        out["tool_call_id"] = message.tool_call_id
    return out


def _relocate_results(entries: list[Entry]) -> list[Entry]:
    """Tool results right after the assistant entry that issued their calls.

    Results are moved per source message, so a message already in place (the usual case)
    stays one output message; a message is split (results moved, the rest left where it was)
    only when its results answer a call that is not right before it.
    """
    answers: dict[str, tuple[int, int]] = {}  # call id → (entry index, block index)
    for index, (_, blocks, _) in enumerate(entries):
        for position, block in enumerate(blocks):
            if block.get("type") == "tool_result":
                answers.setdefault(str(block.get("tool_use_id")), (index, position))
    moved: set[int] = set()
    out: list[Entry] = []
    for index, (role, blocks, source) in enumerate(entries):
        if index in moved:
            continue
        rest = [b for b in blocks if b.get("type") != "tool_result"]
        if rest:
            out.append((role, rest, source))
        calls = [str(b.get("id")) for b in rest if b.get("type") == "tool_use"]
        found = sorted(answers[c] for c in calls if c in answers)
        sources = sorted({i for i, _ in found})
        for answer_index in sources:
            _, answer_blocks, answer_source = entries[answer_index]
            results = [answer_blocks[p] for i, p in found if i == answer_index]
            # Whole only when nothing else follows it: the API combines consecutive user turns,
            # and results must come before any other content of that turn.
            whole = (
                answer_index == index + 1
                and answer_index == sources[-1]
                and len(results) == sum(b.get("type") == "tool_result" for b in answer_blocks)
            )
            if whole:  # in place: the message as it is, results first
                moved.add(answer_index)
                results = sorted(answer_blocks, key=lambda b: b.get("type") != "tool_result")
            out.append(("user", results, answer_source))
    return out


def _anthropic(entries: list[Entry]) -> list[tuple[dict[str, Any], str]]:
    out: list[tuple[dict[str, Any], str]] = []
    if entries and entries[0][0] != "user":
        continuation = {"role": "user", "content": CONTINUATION_TEXT}
        out.append((continuation, SYNTHETIC_CONTINUATION))
    for role, blocks, source in entries:
        clean = [_anthropic_block(b) for b in blocks]
        stored_string = len(blocks) == 1 and blocks[0].get(INTERNAL_STRING)
        only_text = stored_string or (len(clean) == 1 and source in SYNTHETIC)
        out.append(({"role": role, "content": clean[0]["text"] if only_text else clean}, source))
    return out


def _anthropic_block(block: Block) -> Block:
    """Drop engine-internal keys; a part the Messages API takes otherwise is converted
    (parts.py), else a placeholder."""
    internal = (INTERNAL_ARGUMENTS, INTERNAL_STRING, INTERNAL_ITEM, GEMINI_KEY)
    clean = {k: v for k, v in block.items() if k not in internal}
    return to_anthropic(clean) or placeholder(clean)


def _openai(entries: list[Entry]) -> list[tuple[dict[str, Any], str]]:
    out: list[tuple[dict[str, Any], str]] = []
    for role, all_blocks, source in entries:
        blocks = [b for b in all_blocks if b.get("type") not in DROPPED_IN_OPENAI]
        if role == "assistant":
            calls = [
                {
                    "id": b.get("id"),
                    "type": "function",
                    "function": {
                        "name": b.get("name", ""),
                        "arguments": b.get(INTERNAL_ARGUMENTS)
                        or json.dumps(b.get("input", {}), ensure_ascii=False),
                    },
                }
                for b in blocks
                if b.get("type") == "tool_use"
            ]
            text = "\n".join(block_text(b) for b in blocks if b.get("type") != "tool_use")
            if not text and not calls:
                continue  # only private reasoning: nothing this format can carry
            message: dict[str, Any] = {"role": "assistant", "content": text or None}
            if calls:
                message["tool_calls"] = calls
            out.append((message, source))
            continue
        for block in blocks:
            if block.get("type") == "tool_result":
                text = content_text(block.get("content", ""))
                text = text if text.strip() else EMPTY_RESULT_TEXT
                result = {"role": "tool", "tool_call_id": block.get("tool_use_id")}
                out.append(({**result, "content": text}, source))
        rest = [b for b in blocks if b.get("type") != "tool_result"]
        if rest:
            out.append(({"role": "user", "content": _openai_user_content(rest)}, source))
    return out


def _openai_user_content(blocks: list[Block]) -> str | list[dict[str, Any]]:
    if all(b.get("type") == "text" for b in blocks):
        return "\n".join(str(b.get("text", "")) for b in blocks)
    return [to_chat(block) or placeholder(block) for block in blocks]
