"""Work per request grows linearly (up to a log factor) with the number of blocks and messages.

Cost is counted, not timed: every Python and C function call made while `assemble` runs
(`sys.setprofile`), over a deterministic fake counter. Doubling the input may at most about
double the calls: truncation tries O(log n) allowances of O(n) each, so n log n is measured
(2.2–2.9× at these sizes); a quadratic step is 4× and more (the many-tiny-blocks case was
~2,700× before it was fixed).
"""

from __future__ import annotations

from typing import Any

import pytest

from app.core.context_settings import ContextSettings
from app.core.errors import BudgetTooSmall
from app.engine.assemble import AssemblyInput, assemble
from app.engine.budget import calibrated, compute_budget, estimate_limit
from app.engine.types import Message
from tests.engine.strategies import FakeCounter, make_message
from tests.support.work import count_calls

COUNTER = FakeCounter()
# n log n at n = 1,000 → 2,000, with the log counted in whole truncation rounds; quadratic ≥ 4×.
MAX_GROWTH = 3.2
N = 1000


def _conversation(n: int, shape: str) -> list[Message]:
    def text(t: str) -> dict[str, Any]:
        return {"type": "text", "text": t}

    if shape == "tiny_blocks":
        return [make_message(1, "user", [text("a") for _ in range(n)], COUNTER)]
    if shape == "big_blocks":
        return [make_message(1, "user", [text("hello world " * 50) for _ in range(n)], COUNTER)]
    if shape == "many_messages":
        roles = ("user", "assistant")
        return [make_message(i + 1, roles[i % 2], "word " * 20, COUNTER) for i in range(n)]
    call: dict[str, Any] = {"type": "tool_use", "id": "t0", "name": "f", "input": {}}
    result: dict[str, Any] = {"type": "tool_result", "tool_use_id": "t0", "content": "ok"}
    calls, results = [call], [result]
    if shape == "input_keys":
        call["input"] = {f"k{i}": "v" * 70 for i in range(n)}
    elif shape == "nested_result":
        result["content"] = [text("x" * 70) for _ in range(n)]
    elif shape == "parallel_calls":
        calls = [{**call, "id": f"t{i}"} for i in range(n)]
        results = [{**result, "tool_use_id": f"t{i}", "content": "y" * 70} for i in range(n)]
    return [
        make_message(1, "user", "go", COUNTER),
        make_message(2, "assistant", calls, COUNTER),
        make_message(3, "user", results, COUNTER),
    ]


def _assembly_cost(n: int, shape: str, max_tokens: int) -> int:
    request = AssemblyInput(
        messages=tuple(_conversation(n, shape)),
        context_window=200_000,
        max_tokens=max_tokens,
        mode="never",
    )
    return count_calls(lambda: assemble(request, COUNTER), BudgetTooSmall)


SHAPES = ["tiny_blocks", "big_blocks", "many_messages", "input_keys", "nested_result"]


class TestLinearWork:
    @pytest.mark.parametrize("shape", [*SHAPES, "parallel_calls"])
    @pytest.mark.parametrize("max_tokens", [500, 2_000])
    def test_doubling_the_input_at_most_doubles_the_work(self, shape: str, max_tokens: int) -> None:
        once = _assembly_cost(N, shape, max_tokens)
        twice = _assembly_cost(2 * N, shape, max_tokens)
        assert twice <= MAX_GROWTH * once, f"{shape}: {once} → {twice} calls"


class TestHugeBudgets:
    def test_a_budget_above_the_window_is_the_window(self) -> None:
        assert compute_budget(200_000, ContextSettings(), 10**24).tokens == 200_000

    @pytest.mark.parametrize("budget", [10**6, 10**18, 10**24, 2**200])
    @pytest.mark.parametrize("ratio", [0.5, 0.73, 1.37, 2.0])
    def test_estimate_limit_settles_in_a_few_steps(self, budget: int, ratio: float) -> None:
        limit = 0

        def run() -> None:
            nonlocal limit
            limit = estimate_limit(budget, ratio)

        assert count_calls(run, BudgetTooSmall) < 2_000
        assert calibrated(limit, ratio) <= budget
