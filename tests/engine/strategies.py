"""Fake token counters and hypothesis strategies for random conversation histories."""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from hypothesis import strategies as st

from app.core.content import Content
from app.core.context_settings import ContextSettings
from app.engine.assemble import AssemblyInput
from app.engine.items import normalize_posted
from app.engine.text import block_text
from app.engine.types import Message
from app.engine.units import body_tokens
from app.tokens.base import MessageFields
from app.tokens.media import MEDIA_BLOCK_TYPES, MediaCount

FAKE_MESSAGE_OVERHEAD = 4


class _Whole:
    """`count_message` and `count_tools` of a fake, from its `count_text`/`count_content`."""

    def count_text(self, text: str) -> int:
        raise NotImplementedError

    def count_content(self, content: Content) -> int:
        raise NotImplementedError

    def count_message(self, message: MessageFields) -> int:
        calls = message.tool_calls or ()
        return (
            FAKE_MESSAGE_OVERHEAD
            + self.count_content(message.content or "")
            + sum(self.count_text(json.dumps(c, ensure_ascii=False, sort_keys=True)) for c in calls)
        )

    def count_tools(self, tools: Sequence[Mapping[str, Any]]) -> int:
        return self.count_text(json.dumps(list(tools), ensure_ascii=False))

    def count_media(self, block: Mapping[str, Any]) -> MediaCount | None:
        """A media block as the text a reader sees of it (`[image]`), labelled by its type."""
        kind = block.get("type")
        if kind not in MEDIA_BLOCK_TYPES:
            return None
        return MediaCount(self.count_text(block_text(dict(block))), False, "image", str(kind))


@dataclass(frozen=True)
class FakeCounter(_Whole):
    """`len(text) // chars_per_token + 1` per text, 3 more per content block."""

    chars_per_token: int = 4

    def count_text(self, text: str) -> int:
        return len(text) // self.chars_per_token + 1 if text else 0

    def count_content(self, content: Content) -> int:
        if isinstance(content, str):
            return self.count_text(content)
        return sum(3 + self.count_text(block_text(b)) for b in content)


@dataclass(frozen=True)
class WordCounter(_Whole):
    """One token per whitespace-separated word plus one per 8 characters: a different shape."""

    def count_text(self, text: str) -> int:
        return len(text.split()) + len(text) // 8

    def count_content(self, content: Content) -> int:
        if isinstance(content, str):
            return self.count_text(content)
        return sum(2 + self.count_text(block_text(b)) for b in content)


COUNTERS = st.sampled_from([FakeCounter(4), FakeCounter(2), FakeCounter(7), WordCounter()])


def make_message(
    seq: int,
    role: str,
    content: Content,
    counter: Any = FakeCounter(),
    **extra: Any,
) -> Message:
    """A stored message the way the append path would build it (tokens counted once)."""
    draft = Message(id=f"m{seq}", seq=seq, role=role, content=content, tokens=0, **extra)  # type: ignore[arg-type]
    return Message(
        id=draft.id,
        seq=seq,
        role=draft.role,
        content=content,
        tokens=FAKE_MESSAGE_OVERHEAD + body_tokens(draft, counter),
        **extra,
    )


def openai_call(call_id: str, name: str, arguments: dict[str, Any] | str) -> dict[str, Any]:
    text = arguments if isinstance(arguments, str) else json.dumps(arguments)
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": text}}


def stored_items(items: Sequence[Mapping[str, Any]], counter: Any = None) -> list[Message]:
    """Items the way the append path stores them: one message per group, counted once."""
    counter = counter or FakeCounter()
    return [
        Message(
            id=str(posted.indexes[0]),
            seq=seq,
            role=posted.message.role,
            content=posted.message.content,
            tokens=counter.count_message(posted.message),
            tool_calls=posted.message.tool_calls,
            tool_call_id=posted.message.tool_call_id,
            metadata=posted.message.metadata,
        )
        for seq, posted in enumerate(normalize_posted(items), 1)
    ]


# Text sizes from empty-ish to tens of thousands of characters (a file body, a long log).
texts = st.one_of(
    st.sampled_from(["", " ", "ok", "Fix the failing test in tests/test_api.py"]),
    st.text(alphabet="abcdef ghij\nklm", min_size=1, max_size=200),
    st.integers(min_value=2_000, max_value=40_000).map(lambda n: ("line of output " * n)[:n]),
)


def _odd_message(odd: str, shape: str) -> tuple[str, Content, dict[str, Any]]:
    """A message the engine must carry or repair: an unknown block, a mid-conversation system
    message, a result whose call is gone, an image."""
    if odd == "unknown_block":
        thinking = {"type": "thinking", "thinking": "hmm"}
        return ("assistant", [thinking, {"type": "text", "text": "x"}], {})
    if odd == "system":
        return ("system", "Be terse from now on.", {})
    if odd == "orphan" and shape == "openai":
        return ("tool", "late result", {"tool_call_id": "gone"})
    if odd == "orphan":
        return ("user", [{"type": "tool_result", "tool_use_id": "gone", "content": "late"}], {})
    image = {
        "type": "image",
        "source": {"type": "base64", "media_type": "image/png", "data": "AAAA"},
    }
    return ("user", [image, {"type": "text", "text": "see this"}], {})


@st.composite
def histories(draw: Callable[..., Any], counter: Any = FakeCounter()) -> list[Message]:
    """A random conversation in Anthropic or OpenAI shape, tool traffic included."""
    shape = draw(st.sampled_from(["anthropic", "openai"]))
    turns = draw(st.integers(min_value=0, max_value=14))
    raw: list[tuple[str, Content, dict[str, Any]]] = [("user", draw(texts) or "start", {})]
    call_number = 0
    for turn in range(turns):
        kind = draw(st.sampled_from(["chat", "chat", "tools", "tools", "odd"]))
        if kind == "chat":
            raw.append(("assistant", draw(texts), {}))
            raw.append(("user", draw(texts), {}))
            continue
        if kind == "odd":
            odd = draw(st.sampled_from(["unknown_block", "system", "orphan", "image"]))
            raw.append(_odd_message(odd, shape))
            continue
        width = draw(st.integers(min_value=1, max_value=4))
        ids = [f"call_{call_number + i}" for i in range(width)]
        call_number += width
        bodies = [draw(texts) for _ in ids]
        is_last = turn == turns - 1
        pending = is_last and draw(st.booleans())
        if shape == "anthropic":
            uses = [
                {
                    "type": "tool_use",
                    "id": i,
                    "name": "write_file",
                    "input": {"path": "a.py", "content": b},
                }
                for i, b in zip(ids, bodies, strict=True)
            ]
            raw.append(("assistant", [{"type": "text", "text": "Working."}, *uses], {}))
            if not pending:
                if draw(st.booleans()):
                    raw.append(("user", draw(texts) or "hurry", {}))  # results not adjacent
                results = [
                    {"type": "tool_result", "tool_use_id": i, "content": draw(texts)} for i in ids
                ]
                raw.append(("user", [*results, {"type": "text", "text": "done"}], {}))
        else:
            calls = [openai_call(i, "run", {"cmd": b}) for i, b in zip(ids, bodies, strict=True)]
            raw.append(
                ("assistant", draw(st.sampled_from(["", "Running."])), {"tool_calls": calls})
            )
            if not pending:
                if draw(st.booleans()):
                    raw.append(("user", "still there?", {}))  # results not adjacent
                for i in ids:
                    raw.append(("tool", draw(texts), {"tool_call_id": i}))
    return [
        make_message(seq, role, content, counter, **extra)
        for seq, (role, content, extra) in enumerate(raw, 1)
    ]


settings_strategy = st.builds(
    ContextSettings,
    threshold=st.sampled_from([0.5, 0.8, 1.0]),
    reserved_output_tokens=st.sampled_from([0, 100, 4096]),
    keep_recent=st.integers(min_value=0, max_value=8),
    pin_first_message=st.booleans(),
    summary_placement=st.sampled_from(["system", "messages"]),
    fold_target=st.sampled_from([0.3, 0.6, 0.9]),
    max_summary_tokens=st.sampled_from([50, 1000]),
    prune_target=st.sampled_from([0.3, 0.6, 1.0]),
    prune_at_least=st.sampled_from([0, 1024]),
    cache_breakpoints=st.booleans(),
)

# Output budgets (max_tokens): none, too small for anything, tight, roomy.
budgets = st.one_of(
    st.none(),
    st.integers(min_value=0, max_value=300),
    st.integers(min_value=300, max_value=6_000),
    st.integers(min_value=6_000, max_value=200_000),
)
TOOLS = (
    {"name": "read_file", "description": "Read a file", "input_schema": {"type": "object"}},
    {"type": "function", "function": {"name": "run", "description": "Run", "parameters": {}}},
)


@st.composite
def assembly_requests(draw: Callable[..., Any]) -> tuple[AssemblyInput, Any]:
    """A request to assemble a random history in any format and mode, and its counter."""
    counter = draw(COUNTERS)
    history = draw(histories(counter))
    through = draw(st.integers(min_value=0, max_value=len(history)))
    request = AssemblyInput(
        messages=tuple(history),
        context_window=draw(st.sampled_from([1_000, 8_000, 200_000])),
        settings=draw(settings_strategy),
        system_prompt=draw(
            st.sampled_from([None, "", "You are a careful engineer.", "rules " * 400])
        ),
        tools=draw(st.sampled_from([None, TOOLS])),
        summary=draw(st.sampled_from([None, "The user wants tests fixed.", "fact " * 3000]))
        if through
        else None,
        summary_through_seq=through,
        max_tokens=draw(budgets),
        format=draw(st.sampled_from(["anthropic", "openai", "raw"])),
        mode=draw(st.sampled_from(["auto", "never", "force"])),
        calibration_ratio=draw(st.sampled_from([0.5, 1.0, 1.37, 2.0])),
    )
    return request, counter
