"""Render docs/benchmarks.md from one run's results.

Hand-written sections (`## Summary retention`, written by the summary-quality benchmark,
and `## Analysis`, the profiling notes) are carried over from the existing file verbatim.
"""

from __future__ import annotations

import re
import statistics
from dataclasses import dataclass, field
from pathlib import Path

from bench.cases_assemble import AssembleResult
from bench.cases_server import SIZES, BackendRun
from bench.cases_tokens import CountingResult
from bench.machine import Machine

KEPT_SECTIONS = ("## Analysis", "## Summary retention")
LATENCY_TARGET = 1.1
THROUGHPUT_TARGET = 0.5
COUNTING_TARGET = 1.2
SPEEDUP_TARGET = 5.0


@dataclass(slots=True)
class Results:
    machine: Machine
    command: str
    seconds: float = 0.0
    counting: list[tuple[str, CountingResult]] = field(default_factory=list)
    assemble: AssembleResult | None = None
    backends: list[BackendRun] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)


def kept_sections(existing: str) -> list[str]:
    """Sections of the current file that this report must not overwrite."""
    parts = re.split(r"(?m)^(?=## )", existing)
    return [part.rstrip() + "\n" for part in parts if part.startswith(KEPT_SECTIONS)]


def row(*cells: object) -> str:
    return "| " + " | ".join(str(cell) for cell in cells) + " |"


def verdict(ok: bool | None) -> str:
    return "n/a" if ok is None else ("**met**" if ok else "**missed**")


def _ms(value: float) -> str:
    return f"{value:.2f}" if value < 100 else f"{value:.0f}"


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


def http_speedup(results: Results) -> float | None:
    http = next((r.assemble_http for r in results.backends if r.assemble_http), None)
    if not results.assemble or not http or not http.get("requests"):
        return None
    return float(results.assemble.langchain_seconds * 1000 / http["p50_ms"])


def _targets(results: Results) -> list[str]:
    lines = [row("#", "Figure (ratio, same run)", "Target", "Measured", "Verdict"), row(*"-----")]
    for run in results.backends:
        ratios = latency_ratios(run)
        worst = max((max(pair) for size, pair in ratios.items() if size != SIZES[0]), default=None)
        lines.append(
            row(
                1,
                f"context p50 and p99 at 10k and 100k ÷ 1k, {run.backend}",
                f"≤ {LATENCY_TARGET}",
                f"worst {worst:.2f}" if worst is not None else "not measured",
                verdict(None if worst is None else worst <= LATENCY_TARGET),
            )
        )
    for run in results.backends:
        tp = run.throughput_ratio
        lines.append(
            row(
                2,
                f"context ÷ healthz throughput, {run.backend}",
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
    if results.assemble:
        a, speedup = results.assemble, http_speedup(results)
        target = f"≥ {SPEEDUP_TARGET:.0f}×"
        lines += [
            row(
                4,
                "LangChain ÷ Foldwise, stateless in-process (validate + count + assemble)",
                target,
                f"{a.stateless_speedup:.2f}×",
                verdict(a.stateless_speedup >= SPEEDUP_TARGET),
            ),
            row(
                4,
                "LangChain ÷ Foldwise, `POST /assemble-context` over HTTP (p50)",
                target,
                f"{speedup:.2f}×" if speedup is not None else "not measured",
                verdict(None if speedup is None else speedup >= SPEEDUP_TARGET),
            ),
            row(
                4,
                "LangChain ÷ Foldwise, `assemble()` alone on stored counts",
                "(info)",
                f"{a.engine_speedup:.2f}×",
                "–",
            ),
        ]
    return lines


def _machine(results: Results) -> list[str]:
    m = results.machine
    load = " / ".join(f"{value:.2f}" for value in m.load_average)
    return [
        "## Machine and run",
        "",
        f"- Command: `{results.command}` (took {results.seconds / 60:.1f} min)",
        f"- Date: {m.date}; git commit: {m.commit}; Python {m.python}",
        f"- CPU: {m.cores} cores (`nproc`), {m.cpu_model}; memory {m.memory_gib:.1f} GiB",
        f"- Load average at start (1/5/15 min): {load}",
        "- Server: `python -m bench.server` = `create_app()` under uvicorn with uvloop, httptools,",
        "  one worker, no access log, on 127.0.0.1; the load generator (`bench/loadgen.py`) is a",
        "  separate process: raw asyncio sockets, HTTP/1.1 keep-alive, closed loop.",
        "",
    ]


def _latency(results: Results) -> list[str]:
    out = [
        "## 1. Context latency vs history size",
        "",
        "`GET /sessions/{id}/context?format=anthropic` on folded sessions: a summary covers all",
        "but the newest 40 messages (10 tool-using turns, ~4.5k tokens), as after a real fold, so",
        "every request serves the same context and only the stored history differs. One client,",
        "one keep-alive connection, requests back to back; 3 interleaved rounds of ≤ 150",
        "requests (≤ 8 s) per size, samples pooled. Sessions are seeded straight into the",
        "database (`bench/seed.py`: counted like the append path, bulk-inserted by the driver).",
        "",
        row("backend", "messages", "seed s", "samples", "p50 ms", "p99 ms", "p50 ÷ 1k", "p99 ÷ 1k"),
        row("---", *["---:"] * 7),
    ]
    for run in results.backends:
        ratios = latency_ratios(run)
        for seeded in run.seeds:
            lat = run.latency.get(seeded.messages)
            pair = ratios.get(seeded.messages)
            if lat is None or pair is None:
                out.append(
                    row(run.backend, f"{seeded.messages:,}", f"{seeded.seconds:.1f}", *"–" * 5)
                )
                continue
            out.append(
                row(
                    run.backend,
                    f"{seeded.messages:,}",
                    f"{seeded.seconds:.1f}",
                    len(lat.samples_ms),
                    _ms(lat.p50_ms),
                    _ms(lat.p99_ms),
                    f"**{pair[0]:.2f}**",
                    f"**{pair[1]:.2f}**",
                )
            )
    appends = [
        f"{run.backend}: {', '.join(f'{s:.2f} s' for s in run.append_seconds)}"
        for run in results.backends
        if run.append_seconds
    ]
    if appends:
        out += [
            "",
            "For comparison, appending 1,000-message batches through `POST /sessions/{id}/messages`"
            " (one request each): " + "; ".join(appends) + ".",
        ]
    return [*out, ""]


def _throughput(results: Results) -> list[str]:
    out = [
        "## 2. Throughput: context vs healthz on the same server",
        "",
        "32 keep-alive connections, 4 s per measurement after a warm-up, two alternating rounds",
        "(healthz, context, healthz, context), mean of the rounds; the 1k folded session.",
        "",
        row("backend", "healthz req/s", "context req/s", "context errors", "context ÷ healthz"),
        row("---", *["---:"] * 4),
    ]
    for run in results.backends:
        if run.throughput_ratio is None:
            out.append(row(run.backend, "–", "–", "–", "not measured"))
            continue
        out.append(
            row(
                run.backend,
                f"{statistics.mean(run.healthz_rps):.0f}",
                f"{statistics.mean(run.context_rps):.0f}",
                run.context_errors,
                f"**{run.throughput_ratio:.2f}**",
            )
        )
    return [*out, ""]


def _counting(results: Results) -> list[str]:
    out = [
        "## 3. Counting a 1,000-message append batch",
        "",
        "The app's counter over normalized messages exactly as `MessageService` calls it, vs",
        "tiktoken `encode` on exactly the strings the counter encodes (recorded by a spy",
        "counter); 15 interleaved rounds, medians.",
        "",
        row(
            "shape",
            "tokens",
            "strings",
            "app ms",
            "encode ms",
            "encode_ordinary ms",
            "app ÷ encode",
        ),
        row("---", *["---:"] * 6),
    ]
    for shape, c in results.counting:
        out.append(
            row(
                shape,
                f"{c.tokens:,}",
                f"{c.texts:,}",
                f"{c.app_seconds * 1000:.1f}",
                f"{c.encode_seconds * 1000:.1f}",
                f"{c.encode_ordinary_seconds * 1000:.1f}",
                f"**{c.ratio:.2f}**",
            )
        )
    return [*out, ""]


def _assemble(results: Results) -> list[str]:
    title = "## 4. Assembly vs LangChain `trim_messages`"
    a = results.assemble
    if a is None:
        return [title, "", "Not measured in this run.", ""]
    out = [
        title,
        "",
        f"{a.messages:,} OpenAI-shaped messages ({a.input_tokens:,} tokens), budget {a.budget:,}",
        "tokens, both sides counting with tiktoken cl100k_base. LangChain: `trim_messages(",
        'strategy="last")` with a per-message tiktoken counter (cookbook framing). Foldwise:',
        '`assemble()` with `mode="never"` (trim only, as the stateless route). 9 interleaved',
        "rounds, medians.",
        "",
        row("variant", "ms", "LangChain ÷ this", "messages kept"),
        row("---", "---:", "---:", "---:"),
        row(
            "LangChain `trim_messages`",
            f"{a.langchain_seconds * 1000:.1f}",
            "1.00",
            a.langchain_kept,
        ),
        row(
            "Foldwise stateless in-process (validate + count + assemble)",
            f"{a.stateless_seconds * 1000:.1f}",
            f"**{a.stateless_speedup:.2f}**",
            a.foldwise_kept,
        ),
        row(
            "Foldwise `assemble()` alone, counts known (as the session route)",
            f"{a.engine_seconds * 1000:.1f}",
            f"**{a.engine_speedup:.2f}**",
            a.foldwise_kept,
        ),
    ]
    http = next((r.assemble_http for r in results.backends if r.assemble_http), None)
    speedup = http_speedup(results)
    if http and speedup is not None:
        out.append(
            row(
                f"Foldwise `POST /assemble-context` over HTTP, p50 of {http['requests']}",
                f"{http['p50_ms']:.1f}",
                f"**{speedup:.2f}**",
                http.get("messages_included"),
            )
        )
    else:
        out.append(row("Foldwise `POST /assemble-context` over HTTP", "–", "not measured", "–"))
    return [*out, ""]


def render(results: Results) -> str:
    out = [
        "# Benchmarks",
        "",
        "Foldwise sits on every generation's critical path, and agent sessions reach tens of",
        "thousands of messages. These benchmarks measure what a user feels, over loopback HTTP",
        "against the production server settings, and report **every figure as a ratio against a",
        "baseline measured in the same run** (absolute numbers are given for scale only: the",
        "machine is shared and noisy). Regenerate with `make bench` (under 15 minutes on 2 cores).",
        "",
        "![latency vs history size](bench-latency.png)",
        "![throughput](bench-throughput.png)",
        "",
        "## Targets",
        "",
        *_targets(results),
        "",
        *_machine(results),
        *_latency(results),
        *_throughput(results),
        *_counting(results),
        *_assemble(results),
    ]
    problems = results.problems + [
        f"{r.backend}: {p}" for r in results.backends for p in r.problems
    ]
    if problems:
        out += ["## Problems in this run", "", *[f"- {p}" for p in problems], ""]
    return "\n".join(out)


def write(results: Results, path: Path) -> None:
    existing = path.read_text("utf-8") if path.exists() else ""
    text = render(results).rstrip() + "\n"
    for section in kept_sections(existing):
        text += "\n" + section
    path.write_text(text, "utf-8")
