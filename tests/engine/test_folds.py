from __future__ import annotations

import math

from app.core.context_settings import ContextSettings
from app.engine.assemble import AssemblyInput, AssemblyResult, assemble
from app.engine.budget import estimate_limit
from app.engine.folds import (
    MIN_FOLD_UNITS,
    RUNWAY_MESSAGES,
    fold_bounds,
    fold_floor,
    fold_target_tokens,
    plan_fold_count,
    runway_tokens,
)
from app.engine.types import Message
from app.engine.units import Unit
from tests.engine.strategies import FakeCounter, make_message

COUNTER = FakeCounter()


def _chat(turns: int, size: int = 400) -> list[Message]:
    messages = [make_message(1, "user", "The task: build the parser")]
    for turn in range(turns):
        messages.append(make_message(len(messages) + 1, "assistant", f"step {turn} " + "a" * size))
        messages.append(make_message(len(messages) + 1, "user", f"next {turn} " + "b" * size))
    return messages


def _units(*tokens: int) -> list[Unit]:
    return [
        Unit((make_message(i + 1, "assistant", "x" * (4 * (t - 5))),)) for i, t in enumerate(tokens)
    ]


def _fold_and_reassemble(
    request: AssemblyInput, summary: str
) -> tuple[AssemblyResult, AssemblyResult]:
    first = assemble(request, COUNTER)
    assert first.fold_plan is not None
    fields = {f: getattr(request, f) for f in request.__dataclass_fields__}
    fields.update(summary=summary, summary_through_seq=first.fold_plan.through_seq, mode="auto")
    return first, assemble(AssemblyInput(**fields), COUNTER)


class TestPlanFoldCount:
    def test_folds_the_oldest_units_down_to_the_target(self) -> None:
        units = _units(100, 100, 100, 100, 100, 100)
        bounds = fold_bounds(units, keep_recent=1)
        count = plan_fold_count(units, bounds, other_tokens=0, limit=500, target=300, force=False)
        assert count == 3  # 600 → 300 ≤ 0.6 × 500

    def test_folds_a_minimum_chunk_worth_a_summarizer_call(self) -> None:
        units = _units(10, 10, 10, 400)
        bounds = fold_bounds(units, keep_recent=1)
        count = plan_fold_count(units, bounds, other_tokens=0, limit=420, target=415, force=False)
        assert count == MIN_FOLD_UNITS

    def test_recent_messages_are_folded_only_when_they_alone_are_over_budget(self) -> None:
        units = _units(100, 300, 300, 300)
        bounds = fold_bounds(units, keep_recent=3)
        assert bounds.keep_from == 1
        assert (
            plan_fold_count(units, bounds, other_tokens=0, limit=1000, target=500, force=False) == 1
        )
        assert (
            plan_fold_count(units, bounds, other_tokens=0, limit=500, target=250, force=False) == 3
        )

    def test_force_folds_everything_but_keep_recent(self) -> None:
        units = _units(5, 5, 5, 5, 5)
        bounds = fold_bounds(units, keep_recent=2)
        assert (
            plan_fold_count(units, bounds, other_tokens=0, limit=10**6, target=600_000, force=True)
            == 3
        )


class TestRunway:
    """A fold breaks the prompt cache: it must leave room for RUNWAY_MESSAGES more messages."""

    def test_runway_is_room_for_that_many_average_sized_messages(self) -> None:
        assert runway_tokens(400, 2) == RUNWAY_MESSAGES * 200
        assert runway_tokens(0, 0) == 0

    def test_target_is_lowered_only_when_fold_target_leaves_too_little_room(self) -> None:
        assert fold_target_tokens(10_000, 0.6, 2_000) == 6_000  # roomy: fold_target
        assert fold_target_tokens(10_000, 0.6, 7_000) == 3_000  # tight: deeper
        assert fold_target_tokens(10_000, 0.6, 20_000, floor=2_500) == 2_500  # not below
        assert fold_target_tokens(10_000, 0.6, 20_000, floor=8_000) == 6_000  # nor above

    def test_plan_folds_deeper_to_leave_the_runway(self) -> None:
        units = _units(*[100] * 10)
        bounds = fold_bounds(units, keep_recent=2)

        def count(runway: int) -> int:
            target = fold_target_tokens(1000, 0.6, runway, fold_floor(units, bounds, 0))
            return plan_fold_count(
                units, bounds, other_tokens=0, limit=1000, target=target, force=False
            )

        assert count(0) == 4  # 1000 → 600
        assert count(700) == 7  # → 300
        assert count(5000) == 8  # the recent two

    def test_tight_budget_folds_down_to_the_recent_messages(self) -> None:
        history = _chat(20, size=1600)  # ≈ 400 tokens a message: 15 of them fill the budget
        settings = ContextSettings(keep_recent=4, fold_target=0.6)
        request = AssemblyInput(
            messages=tuple(history), context_window=0, max_tokens=6000, settings=settings
        )
        first, second = _fold_and_reassemble(request, "The parser is half built.")
        plan = first.fold_plan
        assert plan is not None
        assert plan.target_tokens < math.floor(0.6 * 6000)
        assert plan.through_seq == len(history) - 4  # all but the last keep_recent
        assert plan.expected_tokens <= plan.target_tokens
        assert [e.id for e in second.explain if e.status == "included"] == [
            "m1",
            *(m.id for m in history[-4:]),
        ]
        assert second.usage.estimated_tokens <= plan.target_tokens

    def test_roomy_budget_keeps_fold_target(self) -> None:
        history = _chat(120)  # ≈ 100 tokens a message: the budget holds about 200
        settings = ContextSettings(keep_recent=4, fold_target=0.6)
        request = AssemblyInput(
            messages=tuple(history), context_window=0, max_tokens=20_000, settings=settings
        )
        plan = assemble(request, COUNTER).fold_plan
        assert plan is not None and plan.target_tokens == math.floor(0.6 * 20_000)
        assert math.floor(0.6 * 20_000) - 300 < plan.expected_tokens <= plan.target_tokens


class TestFoldPlan:
    def test_no_plan_when_it_fits(self) -> None:
        result = assemble(
            AssemblyInput(messages=tuple(_chat(3)), context_window=0, max_tokens=10**5), COUNTER
        )
        assert result.fold_plan is None and {e.status for e in result.explain} == {"included"}

    def test_fold_lands_under_the_target_after_the_summary_is_applied(self) -> None:
        settings = ContextSettings(keep_recent=4, fold_target=0.6)
        request = AssemblyInput(
            messages=tuple(_chat(20)), context_window=0, max_tokens=3000, settings=settings
        )
        first, second = _fold_and_reassemble(request, "The parser is half built.")
        plan = first.fold_plan
        assert plan is not None and plan.trigger == "threshold"
        assert [m.seq for m in plan.messages] == list(
            range(2, plan.through_seq + 1)
        )  # oldest, contiguous
        assert "m1" not in {m.id for m in plan.messages}  # pinned: never given to the summarizer
        assert second.fold_plan is None
        assert second.usage.estimated_tokens <= math.floor(0.6 * estimate_limit(3000, 1.0))
        assert {e.status for e in second.explain if e.seq <= plan.through_seq and e.id != "m1"} == {
            "summarized"
        }
        first_message = second.messages[0]  # the pinned task, exactly as stored
        assert first_message == {"role": "user", "content": "The task: build the parser"}

    def test_first_pass_result_is_already_within_budget(self) -> None:
        request = AssemblyInput(messages=tuple(_chat(20)), context_window=0, max_tokens=3000)
        result = assemble(request, COUNTER)
        assert result.fold_plan is not None and result.usage.total_tokens <= 3000
        assert "dropped" in {e.status for e in result.explain}

    def test_pending_call_and_newest_user_turn_stay_when_recent_messages_overflow(self) -> None:
        history = _chat(6, size=2000)  # every message ≈ 500 tokens
        pending = {"type": "tool_use", "id": "t9", "name": "ls", "input": {}}
        history.append(make_message(len(history) + 1, "assistant", [pending]))
        settings = ContextSettings(keep_recent=3)  # step 5, user turn 13, the pending call
        request = AssemblyInput(
            messages=tuple(history), context_window=0, max_tokens=900, settings=settings
        )
        result = assemble(request, COUNTER)
        assert result.fold_plan is not None
        assert result.fold_plan.through_seq == 12  # into the recent ones, up to the user turn
        assert result.explain[-1].status == "included"  # the pending call is sent
        assert result.usage.total_tokens <= 900

    def test_long_tool_loop_after_the_last_user_message_stays_foldable(self) -> None:
        history = [make_message(1, "user", "task"), make_message(2, "user", "now refactor")]
        for i in range(3, 40, 2):
            use = {"type": "tool_use", "id": f"t{i}", "name": "cat", "input": {}}
            answer = {"type": "tool_result", "tool_use_id": f"t{i}", "content": "x" * 400}
            history.append(make_message(i, "assistant", [use]))
            history.append(make_message(i + 1, "user", [answer]))
        settings = ContextSettings(keep_recent=4)
        request = AssemblyInput(
            messages=tuple(history), context_window=0, max_tokens=1200, settings=settings
        )
        plan = assemble(request, COUNTER).fold_plan
        assert plan is not None and plan.messages[0].id == "m2"  # the old instruction folds too
        assert plan.expected_tokens <= plan.target_tokens

    def test_force_folds_now_even_when_it_fits(self) -> None:
        settings = ContextSettings(keep_recent=2)
        request = AssemblyInput(
            messages=tuple(_chat(5)),
            context_window=0,
            max_tokens=10**5,
            settings=settings,
            mode="force",
        )
        plan = assemble(request, COUNTER).fold_plan
        assert plan is not None and plan.trigger == "force"
        assert [m.seq for m in plan.messages] == list(range(2, 10))  # all but pinned and last 2

    def test_never_mode_drops_oldest_units_instead(self) -> None:
        request = AssemblyInput(
            messages=tuple(_chat(20)), context_window=0, max_tokens=2000, mode="never"
        )
        result = assemble(request, COUNTER)
        assert result.fold_plan is None
        statuses = [e.status for e in result.explain]
        assert statuses[0] == "included"  # pinned
        first_kept = statuses.index("included", 1)
        assert set(statuses[1:first_kept]) == {"dropped"} and "dropped" not in statuses[first_kept:]
        assert result.dropped == tuple(e.id for e in result.explain[1:first_kept])

    def test_fold_plan_only_covers_messages_after_the_previous_summary(self) -> None:
        request = AssemblyInput(
            messages=tuple(_chat(20)),
            context_window=0,
            max_tokens=2500,
            summary="Earlier: set up.",
            summary_through_seq=11,
        )
        plan = assemble(request, COUNTER).fold_plan
        assert plan is not None and min(m.seq for m in plan.messages) == 12
