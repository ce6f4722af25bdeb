"""`format=gemini`: the kept messages as Gemini `contents`, tools as Gemini `tools`, and the
check that they are what the Gemini API accepts (docs/reference.md §Message shapes).

Works on render.py's entries (role, Anthropic-style blocks, source), tool results already
right after the assistant entry that made their calls. One content per entry, never merged:
- role `assistant` → `model`; `tool_use` → a `functionCall` part (`args`; the `id` unless
  Foldwise made it up), thoughts and Gemini-only parts as posted, every other block a text
  part (its readable text; a provider-run tool's note, never its encrypted fields);
- a user entry: its tool results first, each a `functionResponse` (named after its call;
  `response` the posted object, else `{"output": text}`), then its parts (parts.to_gemini,
  or a labelled placeholder);
- a history that starts with the model gets a short user content first (the API wants a
  function call to follow a user turn).
The system (with the summary when placed there) is the top-level `system`, for the request's
`systemInstruction`. Keys only Gemini reads (`thoughtSignature`) come back on their part.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from app.core.content import Block
from app.engine.entries import Entry
from app.engine.gemini_in import (
    DATA_FIELDS,
    GEMINI_KEY,
    GEMINI_PART,
    GEMINI_THOUGHT,
    GENERATED,
    RESPONSE_JSON,
    RESPONSE_KEYS,
    part_extras,
)
from app.engine.parts import placeholder, to_gemini
from app.engine.text import block_text, content_text

Content = dict[str, Any]
EMPTY_OUTPUT = "(no output)"


def to_contents(
    entries: list[Entry], continuation: tuple[str, str]
) -> tuple[list[tuple[Content, str]], dict[str, tuple[str, ...]]]:
    """One content per entry, but the answers to one model turn in one content (the API wants
    a response per call of the turn, together): (content, source) pairs, and for a source
    whose content also carries later entries' answers, their sources. `continuation`: the
    (text, source) of the user content put first when the history starts with the model."""
    calls = {
        str(block.get("id")): block
        for role, blocks, _ in entries
        if role == "assistant"
        for block in blocks
        if block.get("type") == "tool_use"
    }
    out: list[tuple[Content, str]] = []
    if entries and entries[0][0] != "user":
        text, tag = continuation
        out.append(({"role": "user", "parts": [{"text": text}]}, tag))
    for role, blocks, source in entries:
        if role == "assistant":
            parts = [_model_part(b) for b in blocks]
        else:
            parts = [_response(b, calls) for b in blocks if b.get("type") == "tool_result"]
            parts += [_user_part(b) for b in blocks if b.get("type") != "tool_result"]
        parts = [p for p in parts if p is not None]
        if parts:
            gemini_role = "model" if role == "assistant" else "user"
            out.append(({"role": gemini_role, "parts": parts}, source))
    return _answers_together(out)


def _answers_together(
    contents: list[tuple[Content, str]],
) -> tuple[list[tuple[Content, str]], dict[str, tuple[str, ...]]]:
    """A user content that starts with function responses joins the one before it when that
    holds nothing but responses (OpenAI `tool` messages are one stored message per result)."""
    out: list[tuple[Content, str]] = []
    merged: dict[str, tuple[str, ...]] = {}
    for content, source in contents:
        previous = out[-1][0] if out else None
        if (
            previous is not None
            and previous["role"] == content["role"] == "user"
            and all("functionResponse" in p for p in previous["parts"])
            and "functionResponse" in content["parts"][0]
        ):
            first = out[-1][1]
            out[-1] = ({"role": "user", "parts": previous["parts"] + content["parts"]}, first)
            merged[first] = (*merged.get(first, ()), source)
            continue
        out.append((content, source))
    return out, merged


def _model_part(block: Block) -> dict[str, Any] | None:
    kind = block.get("type")
    gemini = block.get(GEMINI_KEY)
    if kind == "tool_use":
        call: dict[str, Any] = {"name": block.get("name", "")}
        if not (isinstance(gemini, Mapping) and gemini.get("no_args")):
            call["args"] = block.get("input", {})
        if not (isinstance(gemini, Mapping) and gemini.get(GENERATED)):
            call["id"] = block.get("id")
        return {"functionCall": call, **part_extras(gemini)}
    if kind in (GEMINI_PART, GEMINI_THOUGHT):
        return dict(block["part"])
    if kind == "text":
        text = str(block.get("text", ""))
        return {"text": text, **part_extras(gemini)} if text else None
    text = block_text(block)
    return {"text": text} if text.strip() else None


def _user_part(block: Block) -> dict[str, Any]:
    return to_gemini(block) or {"text": placeholder(block)["text"]}


def _response(block: Block, calls: Mapping[str, Block]) -> dict[str, Any]:
    call_id = str(block.get("tool_use_id"))
    call = calls.get(call_id, {})
    gemini = block.get(GEMINI_KEY)
    gemini = gemini if isinstance(gemini, Mapping) else {}
    text = content_text(block.get("content", ""))
    response: Any = None
    if gemini.get(RESPONSE_JSON):
        try:
            response = json.loads(text)
        except ValueError:  # cut to fit the budget: sent as the text it now is
            response = None
    if not isinstance(response, dict):
        response = {"output": text if text.strip() else EMPTY_OUTPUT}
    answer: dict[str, Any] = {"name": call.get("name", ""), "response": response}
    call_gemini = call.get(GEMINI_KEY)
    if not (isinstance(call_gemini, Mapping) and call_gemini.get(GENERATED)):
        answer["id"] = call_id
    extras = part_extras(gemini)
    inner = {k: v for k, v in extras.items() if k in RESPONSE_KEYS}
    outer = {k: v for k, v in extras.items() if k not in RESPONSE_KEYS}
    return {"functionResponse": {**answer, **inner}, **outer}


def validate_gemini(contents: Sequence[Mapping[str, Any]]) -> list[str]:
    """What the Gemini API would reject: a role other than user / model, an empty content, a
    part without exactly one data field, a function response answering no call of the model
    turn right before it, a call left unanswered before the conversation moves on (except
    the newest, pending one)."""
    problems: list[str] = []
    open_calls: list[tuple[str | None, str]] = []
    for index, content in enumerate(contents):
        role, parts = content.get("role"), content.get("parts")
        if role not in ("user", "model"):
            problems.append(f"content {index}: role {role!r}")
        if not isinstance(parts, list) or not parts:
            problems.append(f"content {index}: no parts")
            continue
        responses = [p["functionResponse"] for p in parts if "functionResponse" in p]
        for response in responses:
            if _answered(open_calls, response) is None:
                name = response.get("name")
                problems.append(f"content {index}: response {name!r} without its call")
        if open_calls:
            problems.append(f"content {index}: calls {open_calls} not answered")
        open_calls = [
            (p["functionCall"].get("id"), str(p["functionCall"].get("name")))
            for p in parts
            if "functionCall" in p
        ]
        for position, part in enumerate(parts):
            present = [k for k in DATA_FIELDS if k in part]
            if len(present) != 1:
                problems.append(f"content {index} part {position}: data fields {present}")
            elif present == ["text"] and not part.get("thought") and not str(part["text"]):
                problems.append(f"content {index} part {position}: empty text")
    return problems


def _answered(open_calls: list[tuple[str | None, str]], response: Mapping[str, Any]) -> Any:
    for position, (call_id, name) in enumerate(open_calls):
        if call_id == response.get("id") and (call_id is not None or name == response.get("name")):
            return open_calls.pop(position)
    return None
