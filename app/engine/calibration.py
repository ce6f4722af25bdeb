"""Calibration: learn how far our token estimate is from the provider's count
(docs/reference.md §Calibration).

After a context is sent, the client reports the provider's `input_tokens`. The ratio
actual / estimated is smoothed per model family with an exponentially weighted moving
average, ratio ← (1 − α)·ratio + α·sample, so one odd request cannot swing budgets. The
first sample sets the ratio outright (there is nothing to smooth yet). Each sample and
the result are clamped to [0.5, 2.0]: outside that, the report is more likely wrong (a
different context, cached tokens) than our estimate off by over 2×. Budgets then hold
`budget.calibrated(estimate, ratio)` instead of the raw estimate.
"""

from __future__ import annotations

from dataclasses import dataclass

# Weight of the newest sample: 0.3 follows a real drift within ~6 reports (0.7^6 ≈ 0.12 of
# the old ratio left) while damping single-request noise to 30% of its size.
ALPHA = 0.3
MIN_RATIO = 0.5
MAX_RATIO = 2.0


@dataclass(frozen=True)
class Calibration:
    family: str
    ratio: float
    samples: int


def _clamp(ratio: float) -> float:
    return min(MAX_RATIO, max(MIN_RATIO, ratio))


def with_report(
    current: Calibration | None, family: str, estimated: int, actual: int
) -> Calibration:
    """Fold one (estimated, actual) report into the family's ratio.

    A report with a non-positive count carries no information and leaves the ratio unchanged.
    """
    if estimated <= 0 or actual <= 0:
        if current is not None:
            return current
        return Calibration(family=family, ratio=1.0, samples=0)
    sample = _clamp(actual / estimated)
    if current is None or current.samples == 0:
        return Calibration(family=family, ratio=sample, samples=1)
    ratio = _clamp((1 - ALPHA) * current.ratio + ALPHA * sample)
    return Calibration(family=family, ratio=ratio, samples=current.samples + 1)
