"""Timing helpers that survive a noisy machine.

Variants are timed in interleaved rounds (A, B, C, A, B, C, …) so that a burst of load
from a neighbour hits every variant alike, and each figure is a median over rounds.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable, Mapping
from typing import Any


def interleaved_medians(
    actions: Mapping[str, Callable[[], Any]],
    *,
    rounds: int,
    warmup: int = 1,
    setup: Mapping[str, Callable[[], Any]] | None = None,
) -> dict[str, float]:
    """Median wall seconds per action, timed in interleaved rounds after `warmup` rounds;
    `setup[name]`, when given, runs untimed before each call of that action."""
    samples: dict[str, list[float]] = {name: [] for name in actions}
    for round_index in range(warmup + rounds):
        for name, action in actions.items():
            if setup and name in setup:
                setup[name]()
            started = time.perf_counter()
            action()
            elapsed = time.perf_counter() - started
            if round_index >= warmup:
                samples[name].append(elapsed)
    return {name: statistics.median(values) for name, values in samples.items()}


def ratio(value: float, baseline: float) -> float:
    return value / baseline if baseline > 0 else float("inf")
