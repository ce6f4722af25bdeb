"""Gemini `contents` on the way in: a `{"role": "user" | "model", "parts": [...]}` entry
becomes one stored message in the Anthropic-style blocks every format is rendered from
(docs/reference.md §Message shapes; format=gemini sends them back, gemini_out.py).

Parts, in the REST API's camelCase (the SDK's snake_case is read too, and sent back
camelCase):
- `text` → a `text` block; a thought (`thought: true`) → a `gemini_thought` block holding the
  part verbatim (sent back to Gemini only, like Anthropic's thinking blocks);
- `inlineData` / `fileData`: an image → an `image` block, a PDF → a `document` block; any
  other media (audio, video) → a `gemini` block holding the part;
- `functionCall` → a `tool_use` block; `functionResponse` → a `tool_result` block (its
  `response` as text: the `output` string when that is all it holds, else its JSON);
- `executableCode`, `codeExecutionResult` and parts Foldwise does not know → a `gemini` block
  holding the part (a readable note in other formats).
Keys only Gemini reads (`thoughtSignature`, `videoMetadata`, …) ride on the block under
GEMINI_KEY, so a part goes back byte for byte, signature included: Gemini 3 refuses a
function call whose signature does not come back.

A call posted without an `id` (Gemini 2.x never sends one) gets one (GENERATED marks it,
never sent back to Gemini); a `functionResponse` without an `id` answers, by name and in
order, a call of the model turn right before it (`OpenCalls`).
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, NoReturn

from app.core.content import Block
from app.core.errors import InvalidItem, InvalidMessage, UnmatchedCallOutput
from app.engine.shapes import NormalizedMessage, own_keys
from app.tokens.base import MessageFields

GEMINI_KEY = "gemini"
GEMINI_PART = "gemini"
GEMINI_THOUGHT = "gemini_thought"
GENERATED = "generated_id"
Fields = Mapping[str, Any]  # a JSON object as posted
RESPONSE_JSON = "response_json"
ROLES = {"user": "user", "model": "assistant"}
DATA_FIELDS = (
    "text",
    "inlineData",
    "fileData",
    "functionCall",
    "functionResponse",
    "executableCode",
    "codeExecutionResult",
)
# The SDK's model_dump() names → the REST names.
SNAKE = {
    "inline_data": "inlineData",
    "file_data": "fileData",
    "function_call": "functionCall",
    "function_response": "functionResponse",
    "executable_code": "executableCode",
    "code_execution_result": "codeExecutionResult",
    "thought_signature": "thoughtSignature",
    "video_metadata": "videoMetadata",
    "media_resolution": "mediaResolution",
    "part_metadata": "partMetadata",
    "mime_type": "mimeType",
    "file_uri": "fileUri",
    "display_name": "displayName",
    "will_continue": "willContinue",
}
OWN_KEYS = frozenset({"client_id", "metadata"})
PDF = "application/pdf"
# Where the Gemini Files API keeps uploads (readable with the uploader's key only).
FILES_HOST = "generativelanguage.googleapis.com"


# Keys of a functionResponse besides id, name and response (kept with it).
RESPONSE_KEYS = frozenset({"parts", "willContinue", "scheduling"})
# Flags on GEMINI_KEY that say how the block was posted (the rest are keys of the part).
FLAGS = frozenset({GENERATED, RESPONSE_JSON, "no_args", "mimeType"})


def part_extras(gemini: Any) -> dict[str, Any]:
    """The part-level keys (`thoughtSignature`, …) a block was posted with."""
    if not isinstance(gemini, Mapping):
        return {}
    return {k: v for k, v in gemini.items() if k not in FLAGS}


def is_gemini(raw: Any) -> bool:
    """A Gemini content: `parts` instead of `content`."""
    return isinstance(raw, Mapping) and "parts" in raw and "content" not in raw


def camel(value: Mapping[str, Any]) -> dict[str, Any]:
    return {SNAKE.get(k, k): v for k, v in value.items()}


@dataclass
class OpenCalls:
    """Calls of the latest assistant turn not yet answered: (id, name, posted without id)."""

    calls: list[tuple[str, str, bool]] = field(default_factory=list)

    def answer(self, name: str, call_id: str | None) -> str | None:
        """The id a response answers (removed from the open calls): its own, else the first
        open call of that name posted without an id, else of that name; None when it
        answers nothing."""
        if call_id is None:
            named = [i for i, (_, open_name, _) in enumerate(self.calls) if open_name == name]
            idless = [i for i in named if self.calls[i][2]]
            if not named:
                return None
            return self.calls.pop((idless or named)[0])[0]
        for position, (open_id, _, _) in enumerate(self.calls):
            if open_id == call_id:
                del self.calls[position]
                break
        return call_id  # matched here, or later against the post and the session


def random_ids(index: int, position: int) -> str:
    """Ids for stored calls: unique in a session, fixed once stored."""
    return f"gemini_{uuid.uuid4().hex[:24]}"


def positional_ids(index: int, position: int) -> str:
    """Ids for a stateless request: the same post gives the same ids (and prompt-cache hits)."""
    return f"gemini_{index}_{position}"


def _fail(
    index: int, path: str, reason: str, error: type[InvalidMessage] = InvalidItem
) -> NoReturn:
    raise error(f"{path}: {reason}", {"index": index, "path": path, "reason": reason})


def gemini_message(
    raw: Mapping[str, Any],
    index: int,
    open_calls: OpenCalls,
    new_id: Callable[[int, int], str] = random_ids,
) -> NormalizedMessage:
    """One Gemini content as a stored message; InvalidItem names the path on a problem."""
    base = f"messages[{index}]"
    role = ROLES.get(str(raw.get("role")))
    if role is None:
        _fail(index, f"{base}.role", "a Gemini content's role is user or model")
    _known_keys(raw, {"role", "parts", *OWN_KEYS}, index, base, "a Gemini content")
    parts = raw.get("parts")
    if not isinstance(parts, list) or not parts:
        _fail(index, f"{base}.parts", "must be a non-empty list of parts")
    blocks = [
        _block(part, index, f"{base}.parts[{position}]", role, open_calls, new_id, position)
        for position, part in enumerate(parts)
    ]
    client_id, metadata = own_keys(raw, index)
    return NormalizedMessage(
        role=role,  # type: ignore[arg-type]  # one of ROLES' values
        content=blocks,
        metadata=metadata,
        client_id=client_id,
    )


def _block(
    raw_part: Any,
    index: int,
    path: str,
    role: str,
    open_calls: OpenCalls,
    new_id: Callable[[int, int], str],
    position: int,
) -> Block:
    kind, part = _data_field(raw_part, index, path)
    value, extra = part[kind], {k: v for k, v in part.items() if k != kind}
    if kind == "text":
        if not isinstance(value, str):
            _fail(index, f"{path}.text", "must be a string")
        if part.get("thought") is True:
            return {"type": GEMINI_THOUGHT, "part": part}
        return _with({"type": "text", "text": value}, extra)
    if not isinstance(value, Mapping):
        _fail(index, f"{path}.{kind}", "must be an object")
    value = camel(value)
    if kind in ("functionCall", "functionResponse"):
        if role != ("assistant" if kind == "functionCall" else "user"):
            who = (
                "a model content makes function calls"
                if kind == "functionCall"
                else ("a user content answers calls")
            )
            _fail(index, f"{path}.{kind}", f"only {who}")
        if kind == "functionCall":
            return _call(value, extra, index, path, new_id(index, position))
        return _response(value, extra, index, path, open_calls)
    media = _media(kind, value, index, f"{path}.{kind}") if kind.endswith("Data") else None
    if media is not None:
        return _with(media, extra)
    return {"type": GEMINI_PART, "part": {**extra, kind: value}}


def _data_field(raw_part: Any, index: int, path: str) -> tuple[str, dict[str, Any]]:
    """The part (camelCase) and its one data field; InvalidItem for none or several."""
    if not isinstance(raw_part, Mapping):
        _fail(index, path, "a part must be an object")
    part = camel(raw_part)
    present = [k for k in DATA_FIELDS if k in part]
    if len(present) != 1:
        found = ", ".join(present) or "none"
        _fail(index, path, f"a part holds exactly one of {', '.join(DATA_FIELDS)} (found {found})")
    if "thoughtSignature" in part and not isinstance(part["thoughtSignature"], str):
        _fail(index, f"{path}.thoughtSignature", "must be a base64 string")
    return present[0], part


def _with(block: Block, extra: Mapping[str, Any]) -> Block:
    return {**block, GEMINI_KEY: dict(extra)} if extra else block


def _media(kind: str, value: Mapping[str, Any], index: int, path: str) -> Block | None:
    """An image or a PDF as the Anthropic block every format converts from; None for other
    media (kept as a `gemini` block)."""
    mime = value.get("mimeType")
    if kind == "inlineData":
        if not isinstance(value.get("data"), str) or not value["data"]:
            _fail(index, f"{path}.data", "must be a non-empty base64 string")
        if not isinstance(mime, str) or not mime:
            _fail(index, f"{path}.mimeType", "inline data needs its mimeType")
        source: dict[str, Any] = {"type": "base64", "media_type": mime, "data": value["data"]}
    else:
        if not isinstance(value.get("fileUri"), str) or not value["fileUri"]:
            _fail(index, f"{path}.fileUri", "must be a non-empty string")
        if not isinstance(mime, str) or not _public(value["fileUri"]):
            return None  # an uploaded Gemini file or a bucket: only Gemini can read it
        source = {"type": "url", "url": value["fileUri"]}
    if set(value) - {"mimeType", "data", "fileUri"}:
        return None  # displayName and the like: kept whole
    if isinstance(mime, str) and mime.startswith("image/"):
        if source["type"] == "url":
            return {"type": "image", "source": source, GEMINI_KEY: {"mimeType": mime}}
        return {"type": "image", "source": source}
    if mime == PDF:
        if source["type"] == "url":
            return {"type": "document", "source": source, GEMINI_KEY: {"mimeType": mime}}
        return {"type": "document", "source": source}
    return None


def _public(uri: str) -> bool:
    return uri.startswith(("http://", "https://")) and FILES_HOST not in uri.split("/", 3)[2]


def _known_keys(
    value: Mapping[str, Any], known: set[str], index: int, where: str, what: str
) -> None:
    unknown = sorted(set(value) - known)
    if unknown:
        _fail(index, f"{where}.{unknown[0]}", f"not a key of {what}")


def _name_and_id(value: Mapping[str, Any], index: int, where: str) -> tuple[str, str | None]:
    """A functionCall's or functionResponse's `name` (required) and `id` (optional)."""
    name, given_id = value.get("name"), value.get("id")
    if not isinstance(name, str) or not name:
        _fail(index, f"{where}.name", "must be a non-empty string")
    if given_id is not None and (not isinstance(given_id, str) or not given_id):
        _fail(index, f"{where}.id", "must be a non-empty string")
    return name, given_id


def _call(value: Fields, extra: Fields, index: int, path: str, generated_id: str) -> Block:
    name, call_id = _name_and_id(value, index, f"{path}.functionCall")
    args = value.get("args", {})
    if not isinstance(args, dict):
        _fail(index, f"{path}.functionCall.args", "must be an object")
    _known_keys(value, {"name", "args", "id"}, index, f"{path}.functionCall", "a functionCall")
    gemini = dict(extra)
    if call_id is None:
        call_id, gemini[GENERATED] = generated_id, True
    if "args" not in value:
        gemini["no_args"] = True
    block = {"type": "tool_use", "id": call_id, "name": name, "input": args}
    return _with(block, gemini)


def _response(value: Fields, extra: Fields, index: int, path: str, open_calls: OpenCalls) -> Block:
    name, posted_id = _name_and_id(value, index, f"{path}.functionResponse")
    response = value.get("response")
    if not isinstance(response, dict):
        _fail(index, f"{path}.functionResponse.response", "must be an object")
    call_id = open_calls.answer(name, posted_id)
    if call_id is None:
        reason = f"no functionCall named {name!r} in the model turn before it left unanswered"
        _fail(index, f"{path}.functionResponse", reason, UnmatchedCallOutput)
    known = {"id", "name", "response", *RESPONSE_KEYS}
    _known_keys(value, known, index, f"{path}.functionResponse", "a functionResponse")
    gemini = {**extra, **{k: v for k, v in value.items() if k in RESPONSE_KEYS}}
    output = response.get("output")
    if response.keys() == {"output"} and isinstance(output, str):
        text = output
    else:
        text, gemini[RESPONSE_JSON] = json.dumps(response, ensure_ascii=False), True
    return _with({"type": "tool_result", "tool_use_id": call_id, "content": text}, gemini)


def open_calls_of(message: MessageFields | None) -> OpenCalls:
    """The calls an assistant message made (its `tool_use` blocks and Chat `tool_calls`), for
    the responses of the next user turn to answer."""
    calls = OpenCalls()
    if message is None or message.role != "assistant":
        return calls
    content = message.content
    for block in content if isinstance(content, list) else ():
        if isinstance(block, Mapping) and block.get("type") == "tool_use":
            gemini = block.get(GEMINI_KEY)
            idless = isinstance(gemini, Mapping) and gemini.get(GENERATED) is True
            calls.calls.append((str(block.get("id")), str(block.get("name")), idless))
    for call in message.tool_calls or ():
        function = call.get("function")
        name = function.get("name") if isinstance(function, Mapping) else None
        calls.calls.append((str(call.get("id")), str(name), False))
    return calls
