"""The targets and their verdicts: every figure a ratio against a same-run baseline."""

from __future__ import annotations

from bench.cases_server import SIZES, BackendRun
from bench.results import Results

LATENCY_TARGET = 1.1
THROUGHPUT_TARGET = 0.5
COUNTING_TARGET = 1.2
SPEEDUP_TARGET = 5.0


def row(*cells: object) -> str:
    return "| " + " | ".join(str(cell) for cell in cells) + " |"


def verdict(ok: bool | None) -> str:
    return "n/a" if ok is None else ("**met**" if ok else "**missed**")


def latency_ratios(run: BackendRun) -> dict[int, tuple[float, float]]:
    """(p50, p99) ÷ the 1k figures, per measured size."""
    base = run.latency.get(SIZES[0])
    if base is None or not base.samples_ms:
        return {}
    return {
        size: (lat.p50_ms / base.p50_ms, lat.p99_ms / base.p99_ms)
        for size, lat in run.latency.items()
        if lat.samples_ms
    }


def latency_verdict(worst: float | None, noise: float | None) -> str:
    """Met or missed against the target; a miss no larger than the control's own deviation
    (× the target) is flagged as within this run's noise."""
    if worst is None:
        return verdict(None)
    if worst <= LATENCY_TARGET:
        return verdict(True)
    within = noise is not None and worst <= noise * LATENCY_TARGET
    return verdict(False) + (" (within this run's noise)" if within else "")


def control_ratio(run: BackendRun) -> float | None:
    """The larger of p50 and p99 of the control ÷ the 1k figures (noise alone)."""
    base = run.latency.get(SIZES[0])
    if base is None or not base.samples_ms or not run.control.samples_ms:
        return None
    return max(run.control.p50_ms / base.p50_ms, run.control.p99_ms / base.p99_ms)


def http_speedups(results: Results) -> dict[str, float] | None:
    """LangChain ÷ POST /assemble-context, cold and warm, from the interleaved medians."""
    http = next((r.assemble_http for r in results.backends if r.assemble_http), None)
    if not http or not http.get("requests"):
        return None
    return {kind: float(http["langchain_ms"] / http[f"{kind}_ms"]) for kind in ("cold", "warm")}


def targets_table(results: Results) -> list[str]:
    lines = [row("#", "Figure (ratio, same run)", "Target", "Measured", "Verdict"), row(*"-----")]
    for run in results.backends:
        ratios = latency_ratios(run)
        worst = max((max(pair) for size, pair in ratios.items() if size != SIZES[0]), default=None)
        noise = control_ratio(run)
        measured = f"worst {worst:.3f}" if worst is not None else "not measured"
        if worst is not None and noise is not None:
            measured += f" (control 1k ÷ 1k: {noise:.2f})"
        lines.append(
            row(
                1,
                f"context p50 and p99 at 10k and 100k ÷ 1k, {run.backend}",
                f"≤ {LATENCY_TARGET}",
                measured,
                latency_verdict(worst, noise),
            )
        )
    for run in results.backends:
        for label, tp in (
            ("repeat reads, from the cache", run.throughput_ratio),
            ("cache off", run.uncached_ratio),
        ):
            lines.append(
                row(
                    2,
                    f"context ÷ healthz throughput, {label}, {run.backend}",
                    f"≥ {THROUGHPUT_TARGET}",
                    f"{tp:.2f}" if tp is not None else "not measured",
                    verdict(None if tp is None else tp >= THROUGHPUT_TARGET),
                )
            )
    for shape, counting in results.counting:
        lines.append(
            row(
                3,
                f"append counting ÷ tiktoken encode, 1,000 {shape} messages",
                f"≤ {COUNTING_TARGET}",
                f"{counting.ratio:.2f}",
                verdict(counting.ratio <= COUNTING_TARGET),
            )
        )
    target = f"≥ {SPEEDUP_TARGET:.0f}×"
    if results.assemble:
        a = results.assemble
        for label, value in (
            ("cold (history never posted before)", a.stateless_speedup),
            ("warm (same history re-posted)", a.stateless_warm_speedup),
        ):
            lines.append(
                row(
                    4,
                    f"LangChain ÷ Foldwise stateless in-process, {label}",
                    target,
                    f"{value:.2f}×",
                    verdict(value >= SPEEDUP_TARGET),
                )
            )
    speedups = http_speedups(results)
    for kind in ("cold", "warm"):
        http_value = speedups[kind] if speedups else None
        lines.append(
            row(
                4,
                f"LangChain ÷ Foldwise `POST /assemble-context` over HTTP, {kind}",
                target,
                f"{http_value:.2f}×" if http_value is not None else "not measured",
                verdict(None if http_value is None else http_value >= SPEEDUP_TARGET),
            )
        )
    if results.assemble:
        lines.append(
            row(
                4,
                "LangChain ÷ Foldwise `assemble()` alone on stored counts (as the session route)",
                "(info)",
                f"{results.assemble.engine_speedup:.2f}×",
                "–",
            )
        )
    return lines


def plain_summary(table: list[str]) -> list[str]:
    """The targets table said in two lines: which figures met their target, which missed."""
    verdicts: dict[str, list[str]] = {"met": [], "missed": []}
    for line in table[2:]:
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
        for word, figures in verdicts.items():
            if cells[4].startswith(f"**{word}**"):
                figures.append(f"#{cells[0]} {cells[1]}")
    return [
        f"- **Met**: {'; '.join(verdicts['met']) or 'none'}.",
        f"- **Missed**: {'; '.join(verdicts['missed']) or 'none'}"
        + (" — causes and fixes under *Analysis* below." if verdicts["missed"] else "."),
    ]
