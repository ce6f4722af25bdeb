"""Provider compaction (app/engine/compaction.py, SPEC §13): a Responses compaction item and an
Anthropic compaction block are stored verbatim; each format starts its context at the latest
compaction it honours, counts nothing before it and says which messages it stands for
(explain `compacted`); the opaque item travels only in `openai_responses`, the readable
block's text reaches the other formats as a summary note; Foldwise never folds past what it
cannot read; every output validates against the providers' own types."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from app.core.errors import InvalidItem
from app.core.settings import Settings
from app.engine.assemble import OPAQUE_FLOOR_WARNING, AssemblyInput, AssemblyResult, assemble
from app.engine.items import parse_messages
from app.engine.text import block_text
from app.engine.types import Message
from app.tokens.counter import TiktokenCounter, counter_for
from app.tokens.registry import load_registry
from tests.support.official_types import (
    assert_official_anthropic,
    assert_official_chat,
    assert_official_items,
)

COUNTER: TiktokenCounter = counter_for(load_registry(Settings(_env_file=None)).get("gpt-4o"))
ITEM = {"type": "compaction", "encrypted_content": "gAAAAB-opaque-summary", "id": "cmp_1"}
BLOCK = {"type": "compaction", "content": "The user is refactoring the parser; tests are next."}
FORMATS = ("anthropic", "openai", "openai_responses", "raw")


def stored(raw: list[dict[str, Any]]) -> list[Message]:
    return [m.counted(COUNTER.count_message(m)) for m in parse_messages(raw)]


def context(messages: list[Message], fmt: str, **extra: Any) -> AssemblyResult:
    request = AssemblyInput(messages=messages, context_window=128_000, format=fmt, **extra)  # type: ignore[arg-type]
    return assemble(request, COUNTER)


def statuses(result: AssemblyResult) -> dict[int, str]:
    return {e.seq: e.status for e in result.explain if e.seq}


def assert_official(result: AssemblyResult, fmt: str) -> None:
    if fmt == "anthropic":
        assert_official_anthropic(result.messages)
    elif fmt == "openai":
        assert_official_chat(result.messages)
    elif fmt == "openai_responses":
        assert_official_items(result.messages)


HISTORY = [
    {"role": "user", "content": "Task: refactor the parser"},
    {"role": "assistant", "content": "Reading parser.py."},
    {"role": "user", "content": "Keep the public API."},
    ITEM,
    {"role": "user", "content": "Now the tests."},
]


class TestResponsesItem:
    def test_stored_verbatim_in_an_assistant_message(self) -> None:
        (_, _, _, compaction, _) = parse_messages(HISTORY)
        assert compaction.role == "assistant" and compaction.content == [ITEM]

    @pytest.mark.parametrize(
        ("item", "path"),
        [
            ({"type": "compaction"}, "messages[0].encrypted_content"),
            ({"type": "compaction", "encrypted_content": ""}, "messages[0].encrypted_content"),
            ({"type": "compaction", "encrypted_content": "x", "id": 7}, "messages[0].id"),
            (
                {"type": "compaction", "encrypted_content": "x", "content": "y"},
                "messages[0].content",
            ),
        ],
    )
    def test_a_malformed_item_is_refused_naming_its_path(self, item: Any, path: str) -> None:
        with pytest.raises(InvalidItem) as error:
            parse_messages([item])
        assert error.value.details["path"] == path

    def test_openai_responses_sends_its_window_and_what_follows_nothing_before(self) -> None:
        """The window `responses.compact` returns (the user messages right before the item,
        then the item) and what follows; the earlier turns are neither sent nor counted."""
        messages = stored(HISTORY)
        result = context(messages, "openai_responses")
        assert result.messages == [
            {"role": "user", "content": "Keep the public API."},
            ITEM,
            {"role": "user", "content": "Now the tests."},
        ]
        assert statuses(result) == {1: "compacted", 2: "compacted", 3: "included",
                                    4: "included", 5: "included"}  # fmt: skip
        assert result.usage.message_tokens == sum(m.tokens for m in messages[2:])
        assert_official_items(result.messages)

    @pytest.mark.parametrize("fmt", ["anthropic", "openai"])
    def test_other_formats_never_carry_it_and_send_everything(self, fmt: str) -> None:
        result = context(stored(HISTORY), fmt)
        sent = json.dumps(result.messages)
        assert "compaction" not in sent and "gAAAAB" not in sent
        assert "Task: refactor the parser" in sent and "compacted" not in statuses(result).values()
        assert_official(result, fmt)

    def test_foldwise_never_folds_past_it(self) -> None:
        long = [{"role": "assistant" if i % 2 else "user", "content": f"turn {i} " + "w " * 400}
                for i in range(12)]  # fmt: skip
        messages = stored([*HISTORY, *long])
        for mode in ("auto", "force"):
            result = context(messages, "openai_responses", max_tokens=2_500, mode=mode)
            assert result.fold_plan is None
            assert OPAQUE_FLOOR_WARNING in result.warnings
            assert ITEM in result.messages  # held, never left out
            assert result.usage.total_tokens <= 2_500
        # a format that sends what the item stands for folds as usual
        assert context(messages, "anthropic", max_tokens=2_500, mode="force").fold_plan is not None


BLOCK_HISTORY: list[dict[str, Any]] = [
    {"role": "user", "content": "Task: refactor the parser"},
    {"role": "assistant", "content": "Reading parser.py."},
    {"role": "user", "content": "Go on."},
    {"role": "assistant", "content": [
        {"type": "text", "text": "Before the compaction: the API ignores this."},
        BLOCK,
        {"type": "text", "text": "Continuing with the tests."},
    ]},
    {"role": "user", "content": "Thanks."},
]  # fmt: skip


class TestAnthropicBlock:
    def test_anthropic_sends_the_block_and_what_follows_counting_nothing_before(self) -> None:
        messages = stored(BLOCK_HISTORY)
        result = context(messages, "anthropic")
        turn = next(m for m in result.messages if m["role"] == "assistant")
        assert turn["content"][0] == BLOCK
        assert "ignores this" not in json.dumps(result.messages)
        assert statuses(result) == {1: "compacted", 2: "compacted", 3: "compacted",
                                    4: "included", 5: "included"}  # fmt: skip
        assert result.usage.message_tokens < messages[3].tokens + messages[4].tokens + 20
        assert_official_anthropic(result.messages)

    @pytest.mark.parametrize("fmt", ["openai", "openai_responses"])
    def test_other_formats_send_its_text_as_a_summary_note(self, fmt: str) -> None:
        result = context(stored(BLOCK_HISTORY), fmt)
        sent = json.dumps(result.messages)
        assert BLOCK["content"] in sent and '"compaction"' not in sent
        assert "Task: refactor" not in sent
        assert_official(result, fmt)

    def test_a_failed_compaction_is_a_no_op(self) -> None:
        failed = [
            *BLOCK_HISTORY[:3],
            {
                "role": "assistant",
                "content": [
                    {"type": "compaction", "content": None},
                    {"type": "text", "text": "ok"},
                ],
            },
        ]
        result = context(stored(failed), "anthropic")
        assert "compacted" not in statuses(result).values()

    def test_a_fold_reads_its_summary(self) -> None:
        assert BLOCK["content"] in block_text(BLOCK)
        assert block_text(ITEM) == ""  # nothing opaque reaches a summarizer


@st.composite
def mixed(draw: st.DrawFn) -> list[dict[str, Any]]:
    """Chat, Anthropic and Responses turns with compaction items and blocks anywhere."""
    out: list[dict[str, Any]] = [{"role": "user", "content": "Task: ship the release"}]
    for n in range(draw(st.integers(1, 12))):
        kind = draw(st.sampled_from(["chat", "item", "block", "call"]))
        if kind == "item":
            out.append({"type": "compaction", "encrypted_content": f"enc-{n}"})
        elif kind == "block":
            content = draw(st.sampled_from([f"summary {n}", None]))
            blocks = [{"type": "compaction", "content": content}, {"type": "text", "text": "ok"}]
            out.append({"role": "assistant", "content": blocks})
        elif kind == "call":
            out.append(
                {"type": "function_call", "call_id": f"c{n}", "name": "run", "arguments": "{}"}
            )
            out.append({"type": "function_call_output", "call_id": f"c{n}", "output": "ok"})
        else:
            out.append({"role": "assistant", "content": f"reply {n}"})
        out.append({"role": "user", "content": f"next {n}"})
    return out


@settings(max_examples=60, deadline=None)
@given(raw=mixed(), fmt=st.sampled_from(FORMATS), budget=st.integers(400, 6_000))
def test_every_format_starts_at_its_compaction_and_validates(
    raw: Any, fmt: str, budget: int
) -> None:
    messages = stored(raw)
    result = context(messages, fmt, max_tokens=budget)
    assert result.usage.total_tokens <= budget
    assert_official(result, fmt)
    sent = json.dumps(result.messages)
    if fmt != "openai_responses":
        assert "encrypted_content" not in sent or fmt == "raw"
    compacted = [s for s, status in statuses(result).items() if status == "compacted"]
    if compacted:  # a prefix of the history, nothing after it
        assert compacted == list(range(1, max(compacted) + 1))
