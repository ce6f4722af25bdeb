from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from app.core.context_settings import ContextSettings
from app.engine.budget import calibrated, compute_budget, estimate_limit, summary_share


class TestComputeBudget:
    def test_window_threshold_minus_reserved_output(self) -> None:
        budget = compute_budget(200_000, ContextSettings(), None)
        assert budget.tokens == 160_000 - 4096
        assert (budget.context_window, budget.threshold, budget.reserved_output_tokens) == (
            200_000,
            0.8,
            4096,
        )

    def test_max_tokens_wins(self) -> None:
        assert compute_budget(200_000, ContextSettings(), 8000).tokens == 8000

    def test_threshold_is_floored(self) -> None:
        settings = ContextSettings(threshold=0.33, reserved_output_tokens=0)
        assert compute_budget(1001, settings, None).tokens == 330  # 330.33 floored

    def test_never_negative(self) -> None:
        assert compute_budget(1000, ContextSettings(reserved_output_tokens=4096), None).tokens == 0


class TestCalibration:
    @settings(max_examples=300, deadline=None)
    @given(st.integers(min_value=0, max_value=10**7), st.floats(min_value=0.5, max_value=2.0))
    def test_estimate_limit_is_the_largest_fitting_estimate(
        self, budget: int, ratio: float
    ) -> None:
        limit = estimate_limit(budget, ratio)
        assert calibrated(limit, ratio) <= budget
        assert calibrated(limit + 1, ratio) > budget

    def test_calibrated_rounds_up(self) -> None:
        assert calibrated(100, 1.005) == 101


def test_summary_share_is_capped_to_a_quarter_of_the_budget() -> None:
    assert summary_share(1000, ContextSettings(max_summary_tokens=1000)) == 250
    assert summary_share(100_000, ContextSettings(max_summary_tokens=1000)) == 1000
