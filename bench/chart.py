"""The two PNG charts of docs/benchmarks.md (matplotlib, headless)."""

from __future__ import annotations

import statistics
from pathlib import Path

import matplotlib

matplotlib.use("Agg")  # no display on servers and CI
import matplotlib.pyplot as plt

from bench.cases_server import SIZES, BackendRun

LATENCY_TARGET = 1.1
THROUGHPUT_TARGET = 0.5


def latency_chart(runs: list[BackendRun], path: Path) -> None:
    figure, (absolute, relative) = plt.subplots(1, 2, figsize=(11, 4.2))
    for run in runs:
        sizes = [size for size in SIZES if run.latency.get(size) and run.latency[size].samples_ms]
        if not sizes:
            continue
        base = run.latency[sizes[0]]
        for label, pick, style in (("p50", "p50_ms", "-o"), ("p99", "p99_ms", "--s")):
            values = [getattr(run.latency[size], pick) for size in sizes]
            absolute.plot(sizes, values, style, label=f"{run.backend} {label}")
            relative.plot(
                sizes,
                [v / getattr(base, pick) for v in values],
                style,
                label=f"{run.backend} {label}",
            )
    for axis in (absolute, relative):
        axis.set_xscale("log")
        axis.set_xlabel("stored messages in the session")
        axis.grid(True, alpha=0.3)
    absolute.set_ylabel("ms per GET …/context (median of round percentiles)")
    absolute.set_title("Context latency (one client, keep-alive)")
    relative.axhline(LATENCY_TARGET, color="red", linewidth=1, label=f"target ≤ {LATENCY_TARGET}")
    relative.set_ylabel("÷ latency at 1k messages")
    relative.set_title("Latency relative to the 1k session")
    relative.legend(fontsize=8)
    absolute.legend(fontsize=8)
    figure.tight_layout()
    figure.savefig(path, dpi=110)
    plt.close(figure)


def throughput_chart(runs: list[BackendRun], path: Path) -> None:
    measured = [run for run in runs if run.healthz_rps and run.context_rps and run.uncached_rps]
    figure, axis = plt.subplots(figsize=(7, 4.2))
    width = 0.27
    for index, run in enumerate(measured):
        healthz = statistics.mean(run.healthz_rps)
        bars = (
            ("GET /healthz", run.healthz_rps, "#9db4d3"),
            ("GET …/context, from the cache", run.context_rps, "#2f5d9b"),
            ("GET …/context, cache off", run.uncached_rps, "#c0504d"),
        )
        for offset, (label, rps, color) in zip((-1, 0, 1), bars, strict=True):
            value = statistics.mean(rps)
            x = index + offset * width
            axis.bar(x, value, width, color=color, label=label if not index else None)
            if offset >= 0:  # context bars carry their ratio to healthz
                axis.text(x, value, f"{value / healthz:.2f}×", ha="center", va="bottom")
    axis.set_xticks(range(len(measured)), [run.backend for run in measured])
    axis.set_ylabel("requests per second (32 connections)")
    axis.set_title(f"Throughput, production server settings (target ratio ≥ {THROUGHPUT_TARGET})")
    axis.legend(fontsize=8)
    axis.grid(True, axis="y", alpha=0.3)
    figure.tight_layout()
    figure.savefig(path, dpi=110)
    plt.close(figure)
