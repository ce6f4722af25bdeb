"""Calibration: EWMA of provider count / our estimate, clamped to [0.5, 2.0]."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from app.engine.budget import calibrated
from app.engine.calibration import ALPHA, MAX_RATIO, MIN_RATIO, Calibration, with_report

counts = st.integers(min_value=1, max_value=2_000_000)


class TestUpdate:
    def test_first_sample_sets_the_ratio(self) -> None:
        assert with_report(None, "anthropic", 1000, 1150) == Calibration("anthropic", 1.15, 1)

    def test_later_samples_are_smoothed(self) -> None:
        first = with_report(None, "anthropic", 1000, 1100)
        second = with_report(first, "anthropic", 1000, 1500)
        assert second.samples == 2
        assert second.ratio == pytest.approx((1 - ALPHA) * 1.1 + ALPHA * 1.5)

    def test_outliers_are_clamped(self) -> None:
        assert with_report(None, "o200k_base", 100, 1000).ratio == MAX_RATIO
        assert with_report(None, "o200k_base", 1000, 1).ratio == MIN_RATIO

    def test_non_positive_reports_change_nothing(self) -> None:
        current = Calibration("anthropic", 1.2, 4)
        assert with_report(current, "anthropic", 0, 500) is current
        assert with_report(current, "anthropic", 500, 0) is current
        assert with_report(None, "anthropic", 0, 0) == Calibration("anthropic", 1.0, 0)

    @given(st.lists(st.tuples(counts, counts), min_size=1, max_size=50))
    def test_ratio_always_within_clamp(self, reports: list[tuple[int, int]]) -> None:
        calibration = None
        for estimated, actual in reports:
            calibration = with_report(calibration, "anthropic", estimated, actual)
            assert MIN_RATIO <= calibration.ratio <= MAX_RATIO
        assert calibration is not None and calibration.samples == len(reports)

    @given(
        st.floats(min_value=MIN_RATIO, max_value=MAX_RATIO),
        st.lists(counts, min_size=1, max_size=5),
        st.lists(st.integers(min_value=1000, max_value=200_000), min_size=30, max_size=40),
    )
    def test_converges_to_a_constant_true_ratio(
        self, true_ratio: float, warmup: list[int], estimates: list[int]
    ) -> None:
        calibration = None
        for estimated in warmup:  # arbitrary history first (ratio 1.0 … clamped)
            calibration = with_report(calibration, "anthropic", estimated, estimated * 3 // 2 + 1)
        errors = []
        for estimated in estimates:
            actual = max(1, round(estimated * true_ratio))
            calibration = with_report(calibration, "anthropic", estimated, actual)
            errors.append(abs(calibration.ratio - true_ratio))
        # After 30 reports the old history weighs 0.7^30 ≈ 2e-5; rounding adds ≤ 1/1000.
        assert errors[-1] <= 2e-3
        assert errors[-1] <= errors[0] + 1e-3


class TestCalibrated:
    def test_rounds_up(self) -> None:
        assert calibrated(1000, 1.0001) == 1001
        assert calibrated(1000, 1.0) == 1000

    @given(
        st.integers(min_value=0, max_value=2_000_000),
        st.floats(min_value=MIN_RATIO, max_value=MAX_RATIO),
    )
    def test_never_below_the_exact_product(self, tokens: int, ratio: float) -> None:
        total = calibrated(tokens, ratio)
        assert total >= tokens * ratio
        assert total <= math.ceil(tokens * ratio)
