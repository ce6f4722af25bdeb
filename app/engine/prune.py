"""Tier 2: cut bulky content of older messages to a marked head/tail excerpt.

`prune_message` excerpts one message; `prune_history` decides which messages, with hysteresis.

Bulky means a single text over PRUNE_MIN_CHARS: a tool result, a text block, or a string
argument of a tool call (file bodies of `write_file`/`create_file`, patches). Identifiers,
paths and the shape of every block stay, so tool pairing and the story of the turn survive.
Text *slots* (addressable strings inside a message) are shared with tier 4 (truncate.py).
"""

from __future__ import annotations

import copy
import json
import math
from collections.abc import Mapping
from typing import Any, cast

from app.engine.budget import summary_share
from app.engine.folds import fold_target_tokens, runway_tokens
from app.engine.media import media_count, without_media
from app.engine.state import State
from app.engine.types import Message
from app.engine.units import rebuild
from app.tokens.base import TokenCounter

# The design notes (seed 000) prune tool results and text blocks over 2,000 characters and
# keep a 200-character head; we keep a longer head plus a tail, where errors usually are.
PRUNE_MIN_CHARS = 2_000
PRUNE_HEAD_CHARS = 600
PRUNE_TAIL_CHARS = 300

Slot = tuple[Any, ...]


def text_slots(message: Message) -> list[tuple[Slot, str]]:
    """Every replaceable string in a message, with its current text."""
    content = message.content
    if isinstance(content, str):
        slots: list[tuple[Slot, str]] = [(("content",), content)]
    else:
        slots = [slot for i, block in enumerate(content) for slot in _block_slots(i, block)]
    for i, call in enumerate(message.tool_calls or ()):
        slots += [(("arg", i, k), v) for k, v in _arguments(call).items() if isinstance(v, str)]
    return slots


def _block_slots(i: int, block: Mapping[str, Any]) -> list[tuple[Slot, str]]:
    kind = block.get("type")
    if kind == "text" and isinstance(block.get("text"), str):
        return [(("text", i), block["text"])]
    if kind == "tool_use" and isinstance(block.get("input"), Mapping):
        return [(("input", i, k), v) for k, v in block["input"].items() if isinstance(v, str)]
    if kind != "tool_result":
        return []
    nested = block.get("content")
    if isinstance(nested, str):
        return [(("result", i), nested)]
    return [
        (("result_text", i, j), inner["text"])
        for j, inner in enumerate(nested if isinstance(nested, list) else ())
        if isinstance(inner, Mapping) and isinstance(inner.get("text"), str)
    ]


def _arguments(call: Mapping[str, Any]) -> dict[str, Any]:
    function = call.get("function")
    if not isinstance(function, Mapping):
        return {}
    try:
        parsed = json.loads(str(function.get("arguments", "")))
    except ValueError:
        return {}
    return parsed if isinstance(parsed, dict) else {}


def piece_of(slot: Slot) -> Slot:
    """What a slot's tokens belong to: the string content, block i, or tool call i."""
    return ("content",) if slot[0] == "content" else (slot[0] == "arg", slot[1])


def replace_piece(message: Message, piece: Slot, texts: Mapping[Slot, str]) -> Any:
    """One piece of `message` (see `piece_of`) with its slots in `texts` replaced.

    Only the containers on the way to a replaced text are copied (the input is never altered):
    evaluating a candidate cut costs the size of its piece, not a deep copy of it.
    """
    if piece == ("content",):
        return texts.get(piece, message.content)
    is_call, index = piece
    if is_call:
        call = dict((message.tool_calls or ())[index])
        if texts:
            arguments = _arguments(call)
            arguments.update({slot[2]: text for slot, text in texts.items()})
            function = dict(call["function"])
            function["arguments"] = json.dumps(arguments, ensure_ascii=False)
            call["function"] = function
        return call
    block = dict(cast(list[dict[str, Any]], message.content)[index])
    for slot, text in texts.items():
        kind = slot[0]
        if kind in ("text", "result"):
            block["text" if kind == "text" else "content"] = text
        elif kind == "result_text":
            nested = block["content"] = list(block["content"])
            nested[slot[2]] = {**nested[slot[2]], "text": text}
        elif kind == "input":
            block["input"] = {**block["input"], slot[2]: text}
    return block


def replace_slots(message: Message, texts: Mapping[Slot, str], counter: TokenCounter) -> Message:
    """A new message with the given slots replaced, tokens re-counted (input untouched)."""
    by_piece: dict[Slot, dict[Slot, str]] = {}
    for slot, text in texts.items():
        by_piece.setdefault(piece_of(slot), {})[slot] = text
    content: Any
    if isinstance(message.content, str):
        content = replace_piece(message, ("content",), by_piece.get(("content",), {}))
    else:
        content = [
            replace_piece(message, (False, i), by_piece.get((False, i), {}))
            for i in range(len(message.content))
        ]
    calls = [
        replace_piece(message, (True, i), by_piece.get((True, i), {}))
        for i in range(len(message.tool_calls or ()))
    ]
    return rebuild(message, counter, copy.deepcopy(content), copy.deepcopy(calls))


def excerpt(text: str) -> str:
    """Head and tail of `text` around a marker saying how much was cut."""
    cut = len(text) - PRUNE_HEAD_CHARS - PRUNE_TAIL_CHARS
    head, tail = text[:PRUNE_HEAD_CHARS], text[len(text) - PRUNE_TAIL_CHARS :]
    return f"{head}\n…[pruned {cut:,} chars]…\n{tail}"


def has_bulky_text(message: Message) -> bool:
    """Whether `message` holds a text pruning would excerpt."""
    return any(len(text) > PRUNE_MIN_CHARS for _, text in text_slots(message))


def excerpted(message: Message, counter: TokenCounter, *, media: bool = False) -> Message | None:
    """The message with its bulky texts excerpted and, with `media`, its media replaced by
    placeholders (app/engine/media.py), counted; None when there is nothing to cut."""
    texts = {
        slot: excerpt(text) for slot, text in text_slots(message) if len(text) > PRUNE_MIN_CHARS
    }
    cut_media = media and media_count(message) > 0
    if not texts and not cut_media:
        return None
    changed = replace_slots(message, texts, counter) if texts else message
    if cut_media:
        content = without_media(changed.content, counter, message.seq)
        changed = rebuild(changed, counter, content, cast(Any, changed.tool_calls))
    return changed


def prune_message(
    message: Message, counter: TokenCounter, *, media: bool = False
) -> Message | None:
    """The message with its bulky texts excerpted (and with `media`, its media replaced), or
    None when nothing would shrink."""
    pruned = excerpted(message, counter, media=media)
    return pruned if pruned is not None and pruned.tokens < message.tokens else None


def prune_history(state: State, limit: int) -> bool:
    """Tier 2 with hysteresis, replayed over the history in append order; False when some
    step could not prune down to its target (a fold is due instead).

    Pruning every turn "just enough" would change a message in the middle of the prompt on
    almost every turn and break the provider's prompt cache each time. Instead the history is
    replayed message by message as if a context were served after each append: whenever the
    total goes over `limit`, the oldest eligible messages (all but the last `keep_recent` at
    that point) are pruned down to `prune_target × limit`, and at least `prune_at_least`
    tokens; both targets are lowered, as a fold's, to leave room for RUNWAY_MESSAGES
    average-sized messages (folds.RUNWAY_MESSAGES). A step that cannot get down to where a
    fold would land would only buy a few turns before the next cache break: a fold is due
    there instead.
    At `prune_anchor_seq` (the newest message when the first context after the last fold was
    served) everything eligible is pruned: that request broke the cache anyway.
    A pruned message's media are replaced too when at least `keep_media` media blocks follow
    it at that step (the old-media tier, app/engine/media.py): also a function of the prefix.
    The pruned set is a function of the messages and the anchor alone (one pass, each message
    pruned at most once), so appending messages only ever adds to it. Between folds everything
    but the units is constant, so the replay sees the numbers the earlier requests saw.
    """
    settings = state.request.settings
    messages = [m for unit in state.units for m in unit.messages]
    base = state.total() - sum(m.tokens for m in messages)
    running = base
    floor = base - state.summary_tokens() + summary_share(limit, settings)
    pruned: dict[str, Message] = {}
    cursor, settled = 0, True
    appended = [0]  # appended[k]: tokens of messages[:k] as stored
    media = [0]  # media[k]: media blocks in messages[:k]
    for message in messages:
        media.append(media[-1] + media_count(message))

    def old_media(index: int, step: int) -> bool:
        return media[step + 1] - media[index + 1] >= settings.keep_media

    anchor = state.request.prune_anchor_seq
    never = state.request.mode == "never"
    for step, message in enumerate(messages):
        running += message.tokens
        appended.append(appended[-1] + message.tokens)
        # Both targets leave the runway a fold leaves (folds.runway_tokens), measured on the
        # messages so far: what the request served after this message saw. Not with
        # `never`: there the oldest units are dropped (a break per turn), no fold to match.
        runway = 0 if never else runway_tokens(appended[-1], step + 1)
        target = max(0, min(limit, math.floor(settings.prune_target * limit), limit - runway))
        # Worth it only if it ends at least as low as a fold would (a fold keeps the recent
        # messages and adds a summary of up to its share): else fold.
        recent = appended[-1] - appended[max(0, step + 1 - settings.keep_recent)]
        folded = fold_target_tokens(limit, settings.fold_target, runway)
        acceptable = max(target, folded, floor + recent)
        at_anchor = (
            anchor is not None
            and message.seq <= anchor
            and (step + 1 == len(messages) or messages[step + 1].seq > anchor)
        )
        if at_anchor:  # everything eligible, in the request that folded
            while cursor < step + 1 - settings.keep_recent:
                media_too = old_media(cursor, step)
                running -= _prune_into(pruned, messages[cursor], state, media_too)
                cursor += 1
        if running <= limit:
            continue
        eligible_end, freed = step + 1 - settings.keep_recent, 0
        while cursor < eligible_end and (running > target or freed < settings.prune_at_least):
            saved = _prune_into(pruned, messages[cursor], state, old_media(cursor, step))
            freed, running, cursor = freed + saved, running - saved, cursor + 1
        settled = settled and running <= acceptable
    if pruned:
        state.replace_many(pruned, "pruned")
    return settled


def _prune_into(pruned: dict[str, Message], message: Message, state: State, media: bool) -> int:
    """Prune `message` into `pruned` when it has bulky content (or old media, with `media`);
    the tokens saved. A stand-in is left as it is: its count is unknown, and it is on its way
    to being dropped."""
    if message.id in state.handed.stand_ins:
        return 0
    cut = prune_message(message, state.counter, media=media)
    if cut is None:
        return 0
    pruned[message.id] = cut
    return message.tokens - cut.tokens
