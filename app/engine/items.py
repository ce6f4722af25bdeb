"""OpenAI Responses API input items on the way in: turned into the stored messages the engine
already understands (docs/reference.md §Message shapes).

A post may mix Responses items with Anthropic and OpenAI Chat messages. An item is a JSON
object with `type` in ITEM_TYPES, any `type` and no `role` (rejected: an item Foldwise does
not take), or the "easy" form `{"role", "content": [input_text / output_text parts]}`.

- Consecutive assistant-side items of one post (`reasoning`, assistant `message`,
  `function_call`) become ONE stored assistant message, so a reasoning item and the calls it
  precedes are one message and the engine keeps or folds them whole: `content` holds the
  reasoning items verbatim and one `text` block per text part, in posted order, and
  `tool_calls` the calls in OpenAI Chat form (`call_id` → `id`, `arguments` as posted). The
  run must not end with a reasoning item (it would precede nothing): `dangling_reasoning`.
- a `compaction` item (the Responses API's `responses.compact` output) is assistant-side
  too, stored whole like a reasoning item (app/engine/compaction.py says what it covers).
- `function_call_output` → a `tool` message (`tool_call_id` = `call_id`, `content` = output).
- a `user` / `system` / `developer` message → a user / system message (text parts → `text`
  blocks, `input_image` → an `image_url` part).
Everything else of the post goes through `shapes.normalize_message` unchanged. Item keys the
stored form does not use (`id`, `status`, …) are kept in `metadata["extra"]["items"]`, with
where the item went (`call_id`, or `block`: its first text block), so `format=
openai_responses` sends an item's `id` and `status` back with it.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, NoReturn

from app.core.content import Block, Content
from app.core.errors import (
    DanglingReasoning,
    InvalidArguments,
    InvalidItem,
    InvalidMessage,
    UnknownItemType,
    UnmatchedCallOutput,
)
from app.engine.gemini_in import (
    OpenCalls,
    gemini_message,
    is_gemini,
    open_calls_of,
    positional_ids,
    random_ids,
)
from app.engine.shapes import (
    EXTRA_KEY,
    NormalizedMessage,
    normalize_message,
    own_keys,
)
from app.engine.types import Message

REASONING = "reasoning"
COMPACTION = "compaction"
ITEM_TYPES = frozenset({"message", "function_call", "function_call_output", REASONING, COMPACTION})
TEXT_PARTS = frozenset({"input_text", "output_text"})
PART_TYPES = TEXT_PARTS | {"input_image", "refusal"}
# The easy form: nothing but these keys (a Chat message with `tool_calls` stays one).
EASY_KEYS = frozenset({"role", "content", "client_id", "metadata"})
ITEM_ROLES = {"user": "user", "assistant": "assistant", "system": "system", "developer": "system"}
# Keys an item's stored form carries; any other key of the item is kept as extra.
_USED_KEYS: dict[str, frozenset[str]] = {
    "message": frozenset({"type", "role", "content"}),
    "function_call": frozenset({"type", "call_id", "name", "arguments"}),
    "function_call_output": frozenset({"type", "call_id", "output"}),
}
_OWN_KEYS = frozenset({"client_id", "metadata"})


@dataclass(frozen=True, slots=True)
class Posted:
    """One message to store, and the indexes of the posted entries it holds."""

    message: NormalizedMessage
    indexes: tuple[int, ...]


def item_type(raw: Any) -> str | None:
    """The Responses item type of a posted entry, or None for an Anthropic / Chat message."""
    if not isinstance(raw, Mapping):
        return None
    kind = raw.get("type")
    # Types are compared only as strings: a posted list or object is not hashable.
    if (isinstance(kind, str) and kind in ITEM_TYPES) or (kind is not None and "role" not in raw):
        return str(kind) if isinstance(kind, str) else repr(kind)
    content = raw.get("content")
    developer = raw.get("role") == "developer"  # no Chat message has this role
    if kind is not None or not (developer or isinstance(content, list)):
        return None  # the common Chat / Anthropic message, decided without a key scan
    if not ("role" in raw and raw.keys() <= EASY_KEYS):
        return None
    easy = any(
        isinstance(p, Mapping) and isinstance(p.get("type"), str) and p["type"] in PART_TYPES
        for p in (content if isinstance(content, list) else ())
    )
    return "message" if easy or developer else None


def _assistant_side(raw: Any, kind: str | None) -> bool:
    return kind in (REASONING, COMPACTION, "function_call") or (
        kind == "message" and raw.get("role") == "assistant"
    )


def normalize_posted(
    raw: Sequence[Any],
    open_calls: OpenCalls | None = None,
    new_id: Callable[[int, int], str] = random_ids,
) -> list[Posted]:
    """Validate a posted list (InvalidMessage and its item subclasses, with index and path)
    and turn it into the messages to store, grouping assistant-side items. `open_calls`: the
    calls of the session's newest message, which a Gemini `functionResponse` without an id
    may answer; `new_id` names a Gemini call posted without one."""
    out: list[Posted] = []
    group: list[int] = []
    calls = open_calls or OpenCalls()
    newest: Posted | None = None  # the newest assistant message of the post
    calls_of: Posted | None = None  # the message `calls` were read from
    for index, entry in enumerate(raw):
        kind = item_type(entry)
        if _assistant_side(entry, kind):
            group.append(index)
            continue
        if group:
            out.append(_assistant(raw, group))
            group = []
        if out and out[-1].message.role == "assistant":
            newest = out[-1]
        if is_gemini(entry):
            # The calls a Gemini response may answer: those of the newest assistant message,
            # read once per assistant message and only when a Gemini content needs them.
            if newest is not calls_of:
                calls, calls_of = open_calls_of(newest.message if newest else None), newest
            out.append(Posted(gemini_message(entry, index, calls, new_id), (index,)))
        elif kind is None:
            out.append(Posted(normalize_message(entry, index), (index,)))
        elif kind == "message":
            out.append(Posted(_user_side(entry, index), (index,)))
        elif kind == "function_call_output":
            out.append(Posted(_call_output(entry, index), (index,)))
        else:
            _fail(UnknownItemType, index, f"messages[{index}].type", _unknown(kind))
    if group:
        out.append(_assistant(raw, group))
    return out


def unmatched_outputs(raw: Sequence[Any], posted: Sequence[Posted]) -> dict[str, int]:
    """Call id → index of each result answering no call made earlier in `posted`: `tool`
    messages, and the `functionResponse`s of Gemini contents (Anthropic `tool_result` blocks
    are not looked up: an orphan among them is left out at read time)."""
    made: set[str] = set()
    unmatched: dict[str, int] = {}
    for entry in posted:
        message = entry.message
        made.update(str(call.get("id")) for call in message.tool_calls or ())
        if isinstance(message.content, list):
            made.update(str(b.get("id")) for b in message.content if b.get("type") == "tool_use")
        results = [message.tool_call_id] if message.tool_call_id else []
        if is_gemini(raw[entry.indexes[0]]) and isinstance(message.content, list):
            results += [
                str(b["tool_use_id"]) for b in message.content if b["type"] == "tool_result"
            ]
        for call_id in results:
            if call_id not in made:
                unmatched[call_id] = entry.indexes[0]
    return unmatched


def refuse_unmatched(raw: Sequence[Any], unmatched: Mapping[str, int]) -> None:
    """UnmatchedCallOutput for the first `function_call_output` item or Gemini
    `functionResponse` among `unmatched` (Chat `tool` messages keep today's rule: an orphan
    is stored and left out at read time)."""
    for call_id, index in sorted(unmatched.items(), key=lambda pair: pair[1]):
        if item_type(raw[index]) == "function_call_output":
            reason = f"no function_call with call_id {call_id!r} in this post or the session"
            _fail(UnmatchedCallOutput, index, f"messages[{index}].call_id", reason)
        if is_gemini(raw[index]):
            reason = f"no functionCall with id {call_id!r} in this post or the session"
            _fail(UnmatchedCallOutput, index, f"messages[{index}].parts", reason)


def _unknown(kind: str) -> str:
    return f"unknown item type {kind!r}: expected one of {', '.join(sorted(ITEM_TYPES))}"


def _fail(error: type[InvalidMessage], index: int, path: str, reason: str) -> NoReturn:
    raise error(f"{path}: {reason}", {"index": index, "path": path, "reason": reason})


def _string(raw: Mapping[str, Any], key: str, index: int, *, empty: bool = False) -> str:
    value = raw.get(key)
    if not isinstance(value, str) or (not value and not empty):
        _fail(InvalidItem, index, f"messages[{index}].{key}", "must be a non-empty string")
    return value


def _parts(value: Any, index: int, *, allowed: frozenset[str]) -> Content:
    """Item content (a string or parts) as a stored body: text parts → `text` blocks."""
    path = f"messages[{index}].content"
    if isinstance(value, str):
        return value
    if not isinstance(value, list) or not value:
        _fail(InvalidItem, index, path, "must be a string or a non-empty list of content parts")
    blocks: list[Block] = []
    for position, part in enumerate(value):
        where = f"{path}[{position}]"
        kind = part.get("type") if isinstance(part, Mapping) else None
        if not isinstance(kind, str) or kind not in allowed:
            expected = ", ".join(sorted(allowed))
            _fail(InvalidItem, index, f"{where}.type", f"expected a part of type {expected}")
        if kind == "input_image":
            blocks.append(_image(part, index, where))
            continue
        key = "refusal" if kind == "refusal" else "text"
        if not isinstance(part.get(key), str):
            _fail(InvalidItem, index, f"{where}.{key}", "must be a string")
        blocks.append({"type": "text", "text": part[key]})
    return blocks


def _image(part: Mapping[str, Any], index: int, where: str) -> Block:
    url = part.get("image_url")
    if not isinstance(url, str) or not url:
        reason = "an input_image needs an image_url (file ids are not supported)"
        _fail(InvalidItem, index, f"{where}.image_url", reason)
    image: dict[str, Any] = {"url": url}
    if isinstance(part.get("detail"), str):
        image["detail"] = part["detail"]
    return {"type": "image_url", "image_url": image}


def _extras(raw: Mapping[str, Any], kind: str, index: int) -> dict[str, Any] | None:
    if kind in (REASONING, COMPACTION):  # stored whole
        return None
    extra = {k: v for k, v in raw.items() if k not in _USED_KEYS[kind] | _OWN_KEYS}
    return {"index": index, "type": kind, **extra} if extra else None


def _with_extras(metadata: dict[str, Any], extras: list[dict[str, Any]]) -> dict[str, Any]:
    return {**metadata, EXTRA_KEY: {"items": extras}} if extras else metadata


def _user_side(raw: Mapping[str, Any], index: int) -> NormalizedMessage:
    role = ITEM_ROLES.get(str(raw.get("role")))
    if role is None or role == "assistant":
        reason = "must be user, system or developer (assistant items are grouped)"
        _fail(InvalidItem, index, f"messages[{index}].role", reason)
    allowed = TEXT_PARTS if role == "system" else TEXT_PARTS | {"input_image"}
    content = _parts(raw.get("content"), index, allowed=allowed)
    client_id, metadata = own_keys(raw, index)
    extra = _extras(raw, "message", index)
    if raw.get("role") == "developer":
        extra = {"index": index, "type": "message", **(extra or {}), "role": "developer"}
    return NormalizedMessage(
        role=role,  # type: ignore[arg-type]  # one of ITEM_ROLES' values
        content=content,
        metadata=_with_extras(metadata, [extra] if extra else []),
        client_id=client_id,
    )


def _call_output(raw: Mapping[str, Any], index: int) -> NormalizedMessage:
    call_id = _string(raw, "call_id", index)
    output = raw.get("output")
    if isinstance(output, list):
        content = _parts(output, index, allowed=frozenset({"input_text"}))
    elif isinstance(output, str):
        content = output
    else:
        _fail(InvalidItem, index, f"messages[{index}].output", "must be a string or text parts")
    client_id, metadata = own_keys(raw, index)
    extra = _extras(raw, "function_call_output", index)
    return NormalizedMessage(
        role="tool",
        content=content,
        tool_call_id=call_id,
        metadata=_with_extras(metadata, [extra] if extra else []),
        client_id=client_id,
    )


def _call(raw: Mapping[str, Any], index: int) -> dict[str, Any]:
    call_id = _string(raw, "call_id", index)
    name = _string(raw, "name", index)
    arguments = raw.get("arguments")
    path = f"messages[{index}].arguments"
    if not isinstance(arguments, str):
        _fail(InvalidArguments, index, path, "must be a string of JSON text")
    if arguments.strip():
        try:
            parsed = json.loads(arguments)
        except (ValueError, RecursionError):
            _fail(InvalidArguments, index, path, "is not valid JSON")
        if not isinstance(parsed, dict):
            _fail(InvalidArguments, index, path, "must be the JSON text of an object")
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": arguments}}


def _reasoning(raw: Mapping[str, Any], index: int) -> Block:
    if not isinstance(raw.get("summary"), list):
        _fail(InvalidItem, index, f"messages[{index}].summary", "a reasoning item needs a list")
    for key in ("id", "encrypted_content"):
        if key in raw and not isinstance(raw[key], str):
            _fail(InvalidItem, index, f"messages[{index}].{key}", "must be a string")
    return {k: v for k, v in raw.items() if k not in _OWN_KEYS}


def _compaction(raw: Mapping[str, Any], index: int) -> Block:
    """A Responses compaction item, stored whole (its `encrypted_content` is opaque)."""
    _string(raw, "encrypted_content", index)
    if "id" in raw and not isinstance(raw["id"], str):
        _fail(InvalidItem, index, f"messages[{index}].id", "must be a string")
    if "content" in raw:  # the key that tells an Anthropic compaction block from this item
        reason = "a Responses compaction item has no content (it is encrypted_content)"
        _fail(InvalidItem, index, f"messages[{index}].content", reason)
    return {k: v for k, v in raw.items() if k not in _OWN_KEYS}


def _assistant(raw: Sequence[Any], indexes: list[int]) -> Posted:
    blocks: list[Block] = []
    calls: list[dict[str, Any]] = []
    extras: list[dict[str, Any]] = []
    client_ids: list[str] = []
    metadata: dict[str, Any] = {}
    for index in indexes:
        item = raw[index]
        kind = item_type(item)
        client_id, own = own_keys(item, index)
        client_ids += [client_id] if client_id else []
        metadata.update(own)
        extra = _extras(item, str(kind), index)
        if kind == REASONING:
            blocks.append(_reasoning(item, index))
        elif kind == COMPACTION:
            blocks.append(_compaction(item, index))
        elif kind == "function_call":
            calls.append(_call(item, index))
            extra = extra and {**extra, "call_id": calls[-1]["id"]}
        else:
            content = _parts(item.get("content"), index, allowed=TEXT_PARTS | {"refusal"})
            extra = extra and {**extra, "block": len(blocks)}  # where its text starts
            blocks += [{"type": "text", "text": content}] if isinstance(content, str) else content
        extras += [extra] if extra else []
    last = indexes[-1]
    if item_type(raw[last]) == REASONING:
        reason = "a reasoning item must be posted with the message or function_call it precedes"
        _fail(DanglingReasoning, last, f"messages[{last}]", reason)
    if len(set(client_ids)) > 1:
        extras.append({"client_ids": client_ids[1:]})
    message = NormalizedMessage(
        role="assistant",
        content=blocks if blocks else "",
        tool_calls=calls or None,
        metadata=_with_extras(metadata, extras),
        client_id=client_ids[0] if client_ids else None,
    )
    return Posted(message, tuple(indexes))


def parse_messages(raw_messages: Sequence[Mapping[str, Any]]) -> list[Message]:
    """Validate (InvalidMessage → 422) and number posted messages; tokens not counted yet.
    A message's id is the index of its first posted entry (Responses items are grouped)."""
    entries = normalize_posted(raw_messages, new_id=positional_ids)
    refuse_unmatched(
        raw_messages, unmatched_outputs(raw_messages, entries)
    )  # no session to look in
    messages = []
    for position, posted in enumerate(entries):
        normalized = posted.message
        messages.append(
            Message(
                id=str(posted.indexes[0]),
                seq=position + 1,
                role=normalized.role,
                content=normalized.content,
                tokens=0,
                name=normalized.name,
                tool_calls=normalized.tool_calls,
                tool_call_id=normalized.tool_call_id,
                metadata=normalized.metadata,
            )
        )
    return messages
