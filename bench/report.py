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


def _verdict(ok: bool | None) -> str:
    return "n/a" if ok is None else ("**met**" if ok else "**missed**")


def _ms(value: float) -> str:
    return f"{value:.2f}" if value < 100 else f"{value:.0f}"


def _latency_rows(run: BackendRun) -> tuple[list[str], bool | None]:
    rows, verdicts = [], []
    base = run.latency.get(SIZES[0])
    for seeded in run.seeds:
        lat = run.latency.get(seeded.messages)
        if lat is None or not lat.samples_ms or base is None or not base.samples_ms:
            rows.append(
                f"| {run.backend} | {seeded.messages:,} | {seeded.seconds:.1f} | – | – | – | – | – |"
            )
            continue
        p50_ratio, p99_ratio = lat.p50_ms / base.p50_ms, lat.p99_ms / base.p99_ms
        verdicts += [p50_ratio <= LATENCY_TARGET, p99_ratio <= LATENCY_TARGET]
        rows.append(
            f"| {run.backend} | {seeded.messages:,} | {seeded.seconds:.1f} | {len(lat.samples_ms)}"
            f" | {_ms(lat.p50_ms)} | {_ms(lat.p99_ms)} | **{p50_ratio:.2f}** | **{p99_ratio:.2f}** |"
        )
    return rows, (all(verdicts) if verdicts else None)


def _summary_table(results: Results) -> list[str]:
    lines = [
        "| # | Figure (ratio, same run) | Target | Measured | Verdict |",
        "|---|---|---|---|---|",
    ]
    for run in results.backends:
        _, ok = _latency_rows(run)
        worst = [
            max(
                run.latency[s].p50_ms / run.latency[SIZES[0]].p50_ms,
                run.latency[s].p99_ms / run.latency[SIZES[0]].p99_ms,
            )
            for s in SIZES[1:]
            if run.latency.get(s) and run.latency[s].samples_ms and run.latency[SIZES[0]].samples_ms
        ]
        measured = f"worst {max(worst):.2f}" if worst else "not measured"
        lines.append(
            f"| 1 | context p50/p99 at 10k and 100k ÷ 1k, {run.backend} | ≤ {LATENCY_TARGET} | {measured} | {_verdict(ok)} |"
        )
    for run in results.backends:
        tp = run.throughput_ratio
        measured = f"{tp:.2f}" if tp is not None else "not measured"
        ok = None if tp is None else tp >= THROUGHPUT_TARGET
        lines.append(
            f"| 2 | context ÷ healthz throughput, {run.backend} | ≥ {THROUGHPUT_TARGET} | {measured} | {_verdict(ok)} |"
        )
    for shape, counting in results.counting:
        lines.append(
            f"| 3 | append counting ÷ tiktoken encode, 1,000 {shape} messages | ≤ {COUNTING_TARGET} | {counting.ratio:.2f} | {_verdict(counting.ratio <= COUNTING_TARGET)} |"
        )
    if results.assemble:
        a = results.assemble
        lines.append(
            f"| 4 | LangChain ÷ Foldwise, stateless in-process (count + assemble) | ≥ {SPEEDUP_TARGET:.0f}× | {a.stateless_speedup:.2f}× | {_verdict(a.stateless_speedup >= SPEEDUP_TARGET)} |"
        )
        http = next((r.assemble_http for r in results.backends if r.assemble_http), None)
        if http and http.get("requests"):
            speedup = a.langchain_seconds * 1000 / http["p50_ms"]
            lines.append(
                f"| 4 | LangChain ÷ Foldwise, `POST /assemble-context` over HTTP (p50) | ≥ {SPEEDUP_TARGET:.0f}× | {speedup:.2f}× | {_verdict(speedup >= SPEEDUP_TARGET)} |"
            )
        else:
            lines.append(
                f"| 4 | LangChain ÷ Foldwise, `POST /assemble-context` over HTTP | ≥ {SPEEDUP_TARGET:.0f}× | not measured | n/a |"
            )
        lines.append(
            f"| 4 | LangChain ÷ Foldwise, engine alone on stored counts (what the session route runs) | (info) | {a.engine_speedup:.2f}× | – |"
        )
    return lines


def render(results: Results) -> str:
    m = results.machine
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
        *_summary_table(results),
        "",
        "## Machine and run",
        "",
        f"- Command: `{results.command}` (took {results.seconds / 60:.1f} min)",
        f"- Date: {m.date}; git commit: {m.commit}; Python {m.python}",
        f"- CPU: {m.cores} cores (`nproc`), {m.cpu_model}; memory {m.memory_gib:.1f} GiB",
        f"- Load average at start: {m.load_average[0]:.2f} / {m.load_average[1]:.2f} / {m.load_average[2]:.2f}",
        "- Server: `python -m bench.server` = `create_app()` under uvicorn with uvloop, httptools,",
        "  one worker, no access log, on 127.0.0.1; the load generator (`bench/loadgen.py`) is a",
        "  separate process: raw asyncio sockets, HTTP/1.1 keep-alive, closed loop.",
        "",
    ]
    out += _latency_section(results)
    out += _throughput_section(results)
    out += _counting_section(results)
    out += _assemble_section(results)
    if results.problems or any(run.problems for run in results.backends):
        out += ["## Problems in this run", ""]
        out += [f"- {p}" for p in results.problems]
        out += [f"- {run.backend}: {p}" for run in results.backends for p in run.problems]
        out.append("")
    return "\n".join(out)


def _latency_section(results: Results) -> list[str]:
    out = [
        "## 1. Context latency vs history size (SQLite and PostgreSQL)",
        "",
        "`GET /sessions/{id}/context?format=anthropic` on folded sessions: a summary covers all",
        "but the newest 40 messages (10 tool-using turns, ~4.5k tokens), as after a real fold, so",
        "every request serves the same context and only the stored history differs. One client,",
        "one keep-alive connection, requests back to back; 3 interleaved rounds of ≤ 150",
        "requests (≤ 8 s) per size, samples pooled. Sessions are seeded straight into the",
        "database (`bench/seed.py`: counted like the append path, bulk-inserted by the driver).",
        "",
        "| backend | messages | seed s | samples | p50 ms | p99 ms | p50 ÷ 1k | p99 ÷ 1k |",
        "|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for run in results.backends:
        rows, _ = _latency_rows(run)
        out += rows
    appends = [
        f"{run.backend}: {', '.join(f'{s:.2f} s' for s in run.append_seconds)}"
        for run in results.backends
        if run.append_seconds
    ]
    if appends:
        out += [
            "",
            "Appending 1,000-message batches through `POST /sessions/{id}/messages`: "
            + "; ".join(appends)
            + ".",
        ]
    return [*out, ""]


def _throughput_section(results: Results) -> list[str]:
    out = [
        "## 2. Throughput: context vs healthz on the same server",
        "",
        "32 keep-alive connections, 4 s per measurement after a warm-up, two alternating rounds",
        "(healthz, context, healthz, context), mean of the rounds; the 1k folded session.",
        "",
        "| backend | healthz req/s | context req/s | context errors | context ÷ healthz |",
        "|---|---:|---:|---:|---:|",
    ]
    for run in results.backends:
        if run.throughput_ratio is None:
            out.append(f"| {run.backend} | – | – | – | not measured |")
            continue
        out.append(
            f"| {run.backend} | {statistics.mean(run.healthz_rps):.0f} | {statistics.mean(run.context_rps):.0f}"
            f" | {run.context_errors} | **{run.throughput_ratio:.2f}** |"
        )
    return [*out, ""]


def _counting_section(results: Results) -> list[str]:
    out = [
        "## 3. Counting a 1,000-message append batch",
        "",
        "The app's counter over normalized messages exactly as `MessageService` calls it, vs",
        "tiktoken `encode` on exactly the strings the counter encodes (recorded by a spy",
        "counter), 15 interleaved rounds, medians.",
        "",
        "| shape | tokens | strings | app ms | tiktoken encode ms | encode_ordinary ms | app ÷ encode |",
        "|---|---:|---:|---:|---:|---:|---:|",
    ]
    for shape, c in results.counting:
        out.append(
            f"| {shape} | {c.tokens:,} | {c.texts:,} | {c.app_seconds * 1000:.1f} | {c.encode_seconds * 1000:.1f}"
            f" | {c.encode_ordinary_seconds * 1000:.1f} | **{c.ratio:.2f}** |"
        )
    return [*out, ""]


def _assemble_section(results: Results) -> list[str]:
    a = results.assemble
    if a is None:
        return ["## 4. Assembly vs LangChain `trim_messages`", "", "Not measured in this run.", ""]
    out = [
        "## 4. Assembly vs LangChain `trim_messages`",
        "",
        f"{a.messages:,} OpenAI-shaped messages ({a.input_tokens:,} tokens), budget {a.budget:,}",
        "tokens, both sides counting with tiktoken cl100k_base. LangChain: `trim_messages(",
        'strategy="last")` with a per-message tiktoken counter (cookbook framing). Foldwise:',
        '`assemble()` with `mode="never"` (trim only, as the stateless route). 9 interleaved',
        "rounds, medians.",
        "",
        "| variant | ms | LangChain ÷ this | messages kept |",
        "|---|---:|---:|---:|",
        f"| LangChain `trim_messages` | {a.langchain_seconds * 1000:.1f} | 1.00 | {a.langchain_kept} |",
        f"| Foldwise stateless in-process (validate + count + assemble) | {a.stateless_seconds * 1000:.1f} | **{a.stateless_speedup:.2f}** | {a.foldwise_kept} |",
        f"| Foldwise `assemble()` alone, counts known (session route) | {a.engine_seconds * 1000:.1f} | **{a.engine_speedup:.2f}** | {a.foldwise_kept} |",
    ]
    http = next((r.assemble_http for r in results.backends if r.assemble_http), None)
    if http and http.get("requests"):
        out.append(
            f"| Foldwise `POST /assemble-context` over HTTP, p50 of {http['requests']} | {http['p50_ms']:.1f}"
            f" | **{a.langchain_seconds * 1000 / http['p50_ms']:.2f}** | {http.get('messages_included')} |"
        )
    else:
        out.append("| Foldwise `POST /assemble-context` over HTTP | – | not measured | – |")
    return [*out, ""]


def write(results: Results, path: Path) -> None:
    existing = path.read_text("utf-8") if path.exists() else ""
    text = render(results).rstrip() + "\n"
    for section in kept_sections(existing):
        text += "\n" + section
    path.write_text(text, "utf-8")
