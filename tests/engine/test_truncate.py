from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from app.core.context_settings import ContextSettings
from app.core.errors import BudgetTooSmall
from app.engine.assemble import AssemblyInput, assemble
from app.engine.truncate import truncate_message, truncate_text
from tests.engine.strategies import COUNTERS, FakeCounter, make_message

COUNTER = FakeCounter()
HUGE = "word " * 20_000  # 100,000 characters ≈ 25,000 fake tokens


class TestTruncateText:
    @settings(max_examples=100, deadline=None)
    @given(st.text(min_size=0, max_size=3000), st.integers(min_value=0, max_value=400), COUNTERS)
    def test_result_fits_the_allowance_or_is_none(
        self, text: str, allowance: int, counter: FakeCounter
    ) -> None:
        cut = truncate_text(text, allowance, counter)
        if cut is not None:
            assert counter.count_text(cut) <= allowance
            assert cut == text or "[… truncated" in cut

    def test_keeps_the_head_and_marks_the_cut(self) -> None:
        cut = truncate_text(HUGE, 100, COUNTER)
        assert cut is not None and cut.startswith("word word") and cut.endswith("tokens …]")


class TestTruncateMessage:
    def test_cuts_the_largest_block_and_keeps_ids(self) -> None:
        content = [
            {"type": "tool_result", "tool_use_id": "t1", "content": HUGE},
            {"type": "text", "text": "small note"},
        ]
        message = make_message(3, "user", content)
        cut = truncate_message(message, 500, COUNTER)
        assert cut is not None and cut.tokens <= 500 and isinstance(cut.content, list)
        assert cut.content[0]["tool_use_id"] == "t1" and cut.content[1]["text"] == "small note"
        assert cut.result_ids == ("t1",)

    def test_impossible_allowance_gives_none(self) -> None:
        assert truncate_message(make_message(1, "user", HUGE), 2, COUNTER) is None


class TestTightBudgets:
    def test_never_exceeds_budget_with_huge_message(self) -> None:
        history = [
            make_message(1, "user", "start"),
            make_message(2, "assistant", "ok"),
            make_message(3, "user", HUGE),
        ]
        result = assemble(
            AssemblyInput(messages=tuple(history), context_window=0, max_tokens=2000), COUNTER
        )
        assert result.usage.total_tokens <= 2000
        status = {e.id: e.status for e in result.explain}
        assert status["m3"] == "truncated"
        assert any("m3 truncated" in w for w in result.warnings)
        assert "[… truncated" in str(result.messages[-1]["content"])

    def test_summary_and_older_turns_go_before_the_newest_user_message_is_cut(self) -> None:
        system = "rule " * 200
        history = [
            make_message(1, "user", "The task: fix it"),
            make_message(2, "assistant", "On it. " * 40),
            make_message(3, "user", "Now this: " + "detail " * 300),
        ]
        request = AssemblyInput(
            messages=tuple(history),
            context_window=0,
            max_tokens=COUNTER.count_text(system) + 250,
            system_prompt=system,
            summary="Earlier: " + "fact " * 150,
            summary_through_seq=0,
            mode="never",
        )
        result = assemble(request, COUNTER)
        status = {e.id: e.status for e in result.explain}
        assert status == {"m1": "dropped", "m2": "dropped", "m3": "truncated"}
        assert result.summary_sent is None
        # The newest user message gets the room that is left, not a 16-token stub.
        assert result.usage.budget - result.usage.total_tokens < 10
        assert result.usage.message_tokens > 200

    def test_system_prompt_and_tools_over_budget_is_budget_too_small(self) -> None:
        request = AssemblyInput(
            messages=(make_message(1, "user", "hi"),),
            context_window=0,
            max_tokens=50,
            system_prompt="rule " * 100,
        )
        with pytest.raises(BudgetTooSmall) as raised:
            assemble(request, COUNTER)
        assert raised.value.status_code == 422 and raised.value.code == "budget_too_small"

    def test_only_the_newest_user_message_truncated_when_nothing_else_fits(self) -> None:
        history = [
            make_message(1, "user", "The task " + "t" * 4000),
            make_message(2, "assistant", "a" * 4000),
            make_message(3, "user", "Now do this " + "n" * 4000),
        ]
        request = AssemblyInput(
            messages=tuple(history),
            context_window=0,
            max_tokens=150,
            system_prompt="s" * 200,
            mode="never",
            settings=ContextSettings(cache_breakpoints=False),  # plain content
        )
        result = assemble(request, COUNTER)
        assert [e.status for e in result.explain] == ["dropped", "dropped", "truncated"]
        assert len(result.messages) == 1 and str(result.messages[0]["content"]).startswith(
            "Now do this"
        )
        assert result.usage.total_tokens <= 150

    def test_not_even_a_truncated_user_message_fits(self) -> None:
        request = AssemblyInput(
            messages=(make_message(1, "user", "x" * 400),),
            context_window=0,
            max_tokens=55,
            system_prompt="s" * 200,
        )
        with pytest.raises(BudgetTooSmall):
            assemble(request, COUNTER)

    def test_summary_over_its_share_is_flagged_and_cut_only_as_a_last_resort(self) -> None:
        history = [make_message(1, "user", "go"), make_message(2, "assistant", "done")]
        summary = "fact. " * 2000  # ≈ 3,000 tokens, a share of 1,000 is 250
        roomy = AssemblyInput(
            messages=tuple(history),
            context_window=0,
            max_tokens=10_000,
            summary=summary,
            summary_through_seq=0,
            settings=ContextSettings(max_summary_tokens=1000, cache_breakpoints=False),
        )
        fits = assemble(roomy, COUNTER)
        over = "summary is over its share of the budget"
        assert over in fits.warnings and fits.summary_sent == summary
        tight = AssemblyInput(
            **{**{f: getattr(roomy, f) for f in roomy.__dataclass_fields__}, "max_tokens": 1000}
        )
        cut = assemble(tight, COUNTER)
        assert over in cut.warnings and cut.usage.total_tokens <= 1000
        assert cut.summary_sent is not None and "[… truncated" in cut.summary_sent
        assert cut.system is not None and cut.summary_sent in cut.system
