"""Client `cache_control` markers (app/engine/markers.py): valid values only, never on thinking
blocks, and at most four leave in any context, Foldwise's own breakpoints included; the
oldest client markers are the ones dropped, with a warning."""

from __future__ import annotations

import copy
import dataclasses
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from app.core.context_settings import ContextSettings
from app.engine import markers
from app.engine.assemble import AssemblyInput, AssemblyResult, assemble
from app.engine.render import Format
from tests.engine.strategies import FakeCounter, make_message
from tests.support.hypothesis_settings import PROPERTY
from tests.support.markers import count_markers

COUNTER = FakeCounter(1)
EPHEMERAL = {"type": "ephemeral"}
TOOL = {"name": "read_file", "description": "Read", "input_schema": {"type": "object"}}


def _marked_text(text: str, marker: Any = EPHEMERAL) -> dict[str, Any]:
    return {"type": "text", "text": text, "cache_control": marker}


class TestValues:
    @pytest.mark.parametrize(
        "marker",
        [EPHEMERAL, {"type": "ephemeral", "ttl": "5m"}, {"type": "ephemeral", "ttl": "1h"}],
    )
    def test_valid_markers_pass(self, marker: dict[str, Any]) -> None:
        message = {"role": "user", "content": [_marked_text("hi", marker)]}
        assert markers.marker_problem(message) is None
        assert markers.tool_marker_problem({**TOOL, "cache_control": marker}) is None

    @pytest.mark.parametrize(
        "marker",
        [
            "yes",
            None,
            True,
            {},
            {"type": "persistent"},
            {"type": "ephemeral", "ttl": "2h"},
            {"type": "ephemeral", "ttl": None},
            {"type": "ephemeral", "scope": "global"},
        ],
    )
    def test_invalid_markers_are_named(self, marker: Any) -> None:
        message = {"role": "user", "content": ["x", _marked_text("hi", marker)]}
        problem = markers.marker_problem(message)
        assert problem is not None and problem.startswith("content.1.cache_control")
        assert markers.tool_marker_problem({**TOOL, "cache_control": marker})

    def test_a_marker_inside_a_tool_result_is_checked(self) -> None:
        result = {"type": "tool_result", "tool_use_id": "t", "content": [_marked_text("o", "yes")]}
        problem = markers.marker_problem({"role": "user", "content": [result]})
        assert problem is not None and problem.startswith("content.0.content.0.cache_control")

    @pytest.mark.parametrize("kind", ["thinking", "redacted_thinking"])
    def test_thinking_blocks_cannot_carry_one(self, kind: str) -> None:
        block = {"type": kind, "thinking": "hm", "signature": "s", "cache_control": EPHEMERAL}
        problem = markers.marker_problem({"role": "assistant", "content": [block]})
        assert problem is not None and "cannot carry" in problem

    def test_a_cache_control_key_in_tool_input_is_data_not_a_marker(self) -> None:
        use = {"type": "tool_use", "id": "t", "name": "f", "input": {"cache_control": "yes"}}
        assert markers.marker_problem({"role": "assistant", "content": [use]}) is None
        assert markers.count([{"role": "assistant", "content": [use]}], None) == 0


class TestDropOldest:
    def test_tools_first_then_messages_in_order(self) -> None:
        tools = [{**TOOL, "cache_control": EPHEMERAL}, TOOL]
        messages = [{"role": "user", "content": [_marked_text(f"m{i}")]} for i in range(5)]
        before = copy.deepcopy((messages, tools))
        kept, kept_tools, dropped = markers.drop_oldest(messages, tools)
        assert dropped == 2 and markers.count(kept, kept_tools) == 4
        assert kept_tools is not None and "cache_control" not in kept_tools[0]
        assert "cache_control" not in kept[0]["content"][0]
        assert [("cache_control" in m["content"][0]) for m in kept] == [
            False,
            True,
            True,
            True,
            True,
        ]
        assert (messages, tools) == before  # inputs untouched
        assert kept[1] is messages[1]  # only what changes is copied

    def test_inner_tool_result_blocks_before_the_result_block(self) -> None:
        result = {
            "type": "tool_result",
            "tool_use_id": "t",
            "content": [_marked_text("a"), _marked_text("b")],
            "cache_control": EPHEMERAL,
        }
        messages = [{"role": "user", "content": [result]}]
        kept, _, dropped = markers.drop_oldest(messages, None, keep=1)
        assert dropped == 2
        block = kept[0]["content"][0]
        assert "cache_control" in block
        assert ["cache_control" in b for b in block["content"]] == [False, False]

    def test_within_the_limit_nothing_changes(self) -> None:
        messages = [{"role": "user", "content": [_marked_text("m")]}]
        assert markers.drop_oldest(messages, None) == (messages, None, 0)


def _history(marked: list[int], n: int = 10) -> tuple[Any, ...]:
    """n turns; the user turns at the indexes of `marked` carry a client marker per entry."""
    out = []
    for seq in range(1, n + 1):
        role = "user" if seq % 2 else "assistant"
        count = marked[seq - 1] if seq - 1 < len(marked) else 0
        content: Any = [_marked_text(f"t{seq}.{k}") for k in range(count)] or f"turn {seq}"
        out.append(make_message(seq, role, content, COUNTER))
    return tuple(out)


def _context(history: tuple[Any, ...], **changes: Any) -> AssemblyResult:
    request = AssemblyInput(
        messages=history,
        context_window=0,
        max_tokens=50_000,
        system_prompt="Be brief.",
        tools=None,
        summary=None,
        summary_through_seq=0,
        settings=ContextSettings(pin_first_message=False),
        mode="never",
    )
    return assemble(dataclasses.replace(request, **changes), COUNTER)


def _sent_markers(result: AssemblyResult) -> int:
    return count_markers([result.messages, result.system, result.tools])


class TestInAContext:
    def test_six_client_markers_leave_as_four_with_a_warning(self) -> None:
        result = _context(_history([1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1], n=11))  # 6 markers
        assert _sent_markers(result) == 4 and result.breakpoints == 0
        assert any("2 of the client's cache_control markers dropped" in w for w in result.warnings)
        marked = [m for m in result.messages if "cache_control" in str(m)]
        assert [m["content"][0]["text"] for m in marked] == ["t5.0", "t7.0", "t9.0", "t11.0"]

    @pytest.mark.parametrize("fmt", ["anthropic", "raw", "openai", "openai_responses"])
    def test_every_format_is_capped(self, fmt: Format) -> None:
        result = _context(_history([3, 0, 3]), format=fmt)
        assert _sent_markers(result) <= 4

    def test_tools_markers_count_and_are_the_oldest(self) -> None:
        tools = tuple({**TOOL, "name": f"t{i}", "cache_control": EPHEMERAL} for i in range(3))
        result = _context(_history([2]), tools=tools)
        assert _sent_markers(result) == 4 and result.breakpoints == 0
        assert result.tools is not None and "cache_control" not in result.tools[0]

    def test_a_client_marker_on_the_newest_block_is_kept_as_set(self) -> None:
        one_hour = {"type": "ephemeral", "ttl": "1h"}
        history = list(_history([]))
        history[-1] = make_message(10, "assistant", [_marked_text("last", one_hour)], COUNTER)
        result = _context(tuple(history))
        assert result.messages[-1]["content"][-1]["cache_control"] == one_hour
        assert _sent_markers(result) == 2 and result.breakpoints == 1  # the system prompt


@PROPERTY
@given(
    marked=st.lists(st.integers(0, 4), max_size=10),
    tool_markers=st.integers(0, 5),
    fmt=st.sampled_from(["anthropic", "raw", "openai", "openai_responses"]),
    summary=st.sampled_from([None, "Facts so far."]),
    placement=st.sampled_from(["system", "messages"]),
    max_tokens=st.sampled_from([900, 50_000]),
)
def test_no_context_carries_more_than_four_markers(
    marked: list[int],
    tool_markers: int,
    fmt: Format,
    summary: str | None,
    placement: Any,
    max_tokens: int,
) -> None:
    tools = tuple(
        {**TOOL, "name": f"t{i}", **({"cache_control": EPHEMERAL} if i < tool_markers else {})}
        for i in range(5)
    )
    settings = ContextSettings(pin_first_message=False, summary_placement=placement)
    result = _context(
        _history(marked),
        format=fmt,
        tools=tools,
        summary=summary,
        max_tokens=max_tokens,
        settings=settings,
    )
    client = min(4, tool_markers + sum(marked))  # at most what was posted
    assert _sent_markers(result) <= 4
    assert result.breakpoints <= 4 - client or fmt != "anthropic"
