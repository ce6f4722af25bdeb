from __future__ import annotations

import dataclasses
import math
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from app.core.context_settings import ContextSettings
from app.engine.assemble import AssemblyInput, assemble
from tests.engine.strategies import FakeCounter, make_message

COUNTER = FakeCounter()
PLAIN = ContextSettings(cache_breakpoints=False)  # no cache_control blocks in the content
HISTORY = (
    make_message(1, "user", "Fix the failing test"),
    make_message(2, "assistant", "On it."),
    make_message(3, "user", "Thanks"),
)


class TestVerbatim:
    def test_everything_fits_sent_as_is_with_usage(self) -> None:
        request = AssemblyInput(
            messages=HISTORY, context_window=200_000, system_prompt="You are X.", settings=PLAIN
        )
        result = assemble(request, COUNTER)
        assert [m["content"] for m in result.messages] == [
            "Fix the failing test",
            "On it.",
            "Thanks",
        ]
        usage = result.usage
        assert usage.budget == 160_000 - 4096 and usage.context_window == 200_000
        assert usage.system_tokens == COUNTER.count_text("You are X.")
        assert usage.message_tokens == sum(m.tokens for m in HISTORY)
        assert (
            usage.total_tokens
            == usage.estimated_tokens
            == usage.system_tokens + usage.message_tokens
        )
        assert (result.messages_included, result.messages_total, result.fold_plan) == (3, 3, None)
        assert result.warnings == () and result.pruned == () and result.dropped == ()

    def test_calibration_ratio_scales_the_total(self) -> None:
        request = AssemblyInput(
            messages=HISTORY, context_window=0, max_tokens=1000, calibration_ratio=1.37
        )
        usage = assemble(request, COUNTER).usage
        assert usage.total_tokens == math.ceil(usage.estimated_tokens * 1.37)
        assert usage.calibration_ratio == 1.37

    def test_tools_are_counted_and_rendered(self) -> None:
        tools = ({"name": "read", "description": "Read", "input_schema": {"type": "object"}},)
        result = assemble(
            AssemblyInput(
                messages=HISTORY, context_window=0, max_tokens=1000, tools=tools, format="openai"
            ),
            COUNTER,
        )
        assert result.tools == [
            {
                "type": "function",
                "function": {
                    "name": "read",
                    "description": "Read",
                    "parameters": {"type": "object"},
                },
            }
        ]
        assert result.usage.tools_tokens > 0


class TestSummary:
    def test_covered_messages_are_summarized_and_pinned_stays(self) -> None:
        request = AssemblyInput(
            messages=HISTORY,
            context_window=0,
            max_tokens=1000,
            summary="He asked for a fix.",
            summary_through_seq=2,
            settings=PLAIN,
        )
        result = assemble(request, COUNTER)
        assert [e.status for e in result.explain] == ["included", "summarized", "included"]
        assert result.system == "Summary of earlier conversation:\nHe asked for a fix."
        assert result.usage.summary_tokens == COUNTER.count_text(result.system)  # as sent

    def test_unpinned_covered_messages_are_all_summarized(self) -> None:
        request = AssemblyInput(
            messages=HISTORY,
            context_window=0,
            max_tokens=1000,
            summary="S",
            summary_through_seq=2,
            settings=ContextSettings(pin_first_message=False, summary_placement="messages"),
        )
        result = assemble(request, COUNTER)
        assert [(e.id, e.status) for e in result.explain] == [
            ("summary", "synthetic"),
            ("summary_ack", "synthetic"),
            ("m1", "summarized"),
            ("m2", "summarized"),
            ("m3", "included"),
        ]
        assert result.messages_included == len(result.messages) == 3
        assert [m["role"] for m in result.messages] == ["user", "assistant", "user"]
        assert result.messages[0]["content"] == "[Summary of earlier conversation]\nS"


class TestPendingCall:
    def test_a_call_before_the_pinned_first_user_message_is_not_pending(self) -> None:
        # An assistant-first history: the call is unanswered and a user message follows it.
        # The pinned first user message is held apart from the units, yet it still comes
        # after the call, so the call is left out rather than sent unanswered mid-history.
        history = [
            make_message(
                1, "assistant", [{"type": "tool_use", "id": "t1", "name": "cat", "input": {}}]
            ),
            make_message(2, "user", "alpha"),
        ]
        for fmt in ("anthropic", "openai"):
            result = assemble(
                AssemblyInput(
                    messages=tuple(history),
                    context_window=0,
                    max_tokens=4000,
                    format=fmt,
                    settings=ContextSettings(pin_first_message=True, cache_breakpoints=False),
                ),
                COUNTER,
            )
            assert [m["role"] for m in result.messages if m["role"] != "system"] == ["user"]
            assert "message m1 not sent: tool call without a result" in result.warnings

    def test_newest_pending_call_is_kept_under_pressure(self) -> None:
        history = [make_message(1, "user", "go")]
        for i in range(2, 30, 2):
            history.append(
                make_message(
                    i,
                    "assistant",
                    [{"type": "tool_use", "id": f"t{i}", "name": "cat", "input": {}}],
                )
            )
            history.append(
                make_message(
                    i + 1,
                    "user",
                    [{"type": "tool_result", "tool_use_id": f"t{i}", "content": "x" * 800}],
                )
            )
        history.append(
            make_message(
                30, "assistant", [{"type": "tool_use", "id": "t30", "name": "cat", "input": {}}]
            )
        )
        result = assemble(
            AssemblyInput(messages=tuple(history), context_window=0, max_tokens=600, mode="never"),
            COUNTER,
        )
        assert result.explain[-1].status == "included"
        assert result.messages[-1]["content"][-1]["id"] == "t30"
        assert result.usage.total_tokens <= 600


@given(
    blank=st.text(alphabet=" \t\n\r\u00a0\u2028", max_size=20),
    fmt=st.sampled_from(["anthropic", "openai", "openai_responses", "raw"]),
    placement=st.sampled_from(["system", "messages"]),
    summary=st.sampled_from([None, "Earlier: the user asked for tests."]),
)
def test_a_blank_system_prompt_is_no_system_prompt(
    blank: str, fmt: Any, placement: Any, summary: str | None
) -> None:
    """Whitespace-only system text is sent nowhere, in every format and placement (an OpenAI
    system message of spaces failed validation: a 500)."""
    request = AssemblyInput(
        messages=[make_message(1, "user", "hello")],
        context_window=10_000,
        settings=ContextSettings(summary_placement=placement),
        system_prompt=blank,
        summary=summary,
        format=fmt,
    )
    result = assemble(request, FakeCounter())
    without = assemble(dataclasses.replace(request, system_prompt=None), FakeCounter())
    assert (result.system, result.messages) == (without.system, without.messages)
    assert result.usage == without.usage
