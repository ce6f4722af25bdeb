"""Render docs/benchmarks.md from one run's results.

Hand-written sections (`## Summary retention`, written by the summary-quality benchmark,
and `## Analysis`, the profiling notes) are carried over from the existing file verbatim.
"""

from __future__ import annotations

import re
import statistics
from pathlib import Path

from bench import wrk
from bench.cases_server import (
    LATENCY_REQUESTS,
    LATENCY_ROUNDS,
    LATENCY_SECONDS,
    SIZES,
    THROUGHPUT_CONCURRENCY,
    THROUGHPUT_ROUNDS,
    THROUGHPUT_SECONDS,
)
from bench.results import Results
from bench.targets import (
    http_speedups,
    latency_ratios,
    plain_summary,
    row,
    targets_table,
)

KEPT_SECTIONS = ("## Analysis", "## Summary retention", "## Prompt cache")


def kept_sections(existing: str) -> list[str]:
    """Sections of the current file that this report must not overwrite."""
    parts = re.split(r"(?m)^(?=## )", existing)
    return [part.rstrip() + "\n" for part in parts if part.startswith(KEPT_SECTIONS)]


def _ms(value: float) -> str:
    return f"{value:.2f}" if value < 100 else f"{value:.0f}"


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
        "every request serves the same context and only the stored history differs. The sizes",
        "are measured on a server with the served-context cache off, so every request loads and",
        "assembles (as the first read after an append does); the *from the cache* row is the 1k",
        "session on the server as deployed, where a repeated read is a hit. One client,",
        f"one keep-alive connection, requests back to back; {LATENCY_ROUNDS} interleaved rounds of",
        f"≤ {LATENCY_REQUESTS} requests (≤ {LATENCY_SECONDS:.0f} s) per size, samples pooled."
        " Sessions are seeded straight into the",
        "database (`bench/seed.py`: counted like the append path, bulk-inserted by the driver).",
        "The control row measures the 1k session (cache off) a second time in the same rounds:",
        "its ratio is what noise alone does to a ratio in this run. p50 and p99 are medians",
        "over the rounds of each round's percentile (robust to a burst of load from a",
        "neighbour, which lands in one round of one series); the pooled p99 over all samples",
        "is shown too.",
        "",
        row(
            "backend",
            "messages",
            "seed s",
            "samples",
            "p50 ms",
            "p99 ms",
            "pooled p99 ms",
            "p50 ÷ 1k",
            "p99 ÷ 1k",
        ),
        row("---", *["---:"] * 8),
    ]
    for run in results.backends:
        ratios = latency_ratios(run)
        for seeded in run.seeds:
            lat = run.latency.get(seeded.messages)
            pair = ratios.get(seeded.messages)
            if lat is None or pair is None:
                out.append(
                    row(run.backend, f"{seeded.messages:,}", f"{seeded.seconds:.1f}", *"–" * 6)
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
                    _ms(lat.pooled_p99_ms),
                    f"**{pair[0]:.2f}**",
                    f"**{pair[1]:.2f}**",
                )
            )
    for run in results.backends:
        base = run.latency.get(SIZES[0])
        if run.control.samples_ms and base is not None and base.samples_ms:
            out.append(
                row(
                    run.backend,
                    f"{SIZES[0]:,} again (control)",
                    "–",
                    len(run.control.samples_ms),
                    _ms(run.control.p50_ms),
                    _ms(run.control.p99_ms),
                    _ms(run.control.pooled_p99_ms),
                    f"{run.control.p50_ms / base.p50_ms:.2f}",
                    f"{run.control.p99_ms / base.p99_ms:.2f}",
                )
            )
    for run in results.backends:
        base = run.latency.get(SIZES[0])
        if run.cached.samples_ms and base is not None and base.samples_ms:
            out.append(
                row(
                    run.backend,
                    f"{SIZES[0]:,} from the cache",
                    "–",
                    len(run.cached.samples_ms),
                    _ms(run.cached.p50_ms),
                    _ms(run.cached.p99_ms),
                    _ms(run.cached.pooled_p99_ms),
                    f"{run.cached.p50_ms / base.p50_ms:.2f}",
                    f"{run.cached.p99_ms / base.p99_ms:.2f}",
                )
            )
    for run in results.backends:
        check = run.context_check
        if check:
            out += [
                "",
                f"{run.backend}, what the 1k session's context held: summary version"
                f" {check.get('summary_version')}, {check.get('messages_included')} messages"
                f" sent of {check.get('messages_total')} stored, {check.get('total_tokens')}"
                f" tokens, folded in the call: {check.get('summarized')}.",
            ]
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
        f"{THROUGHPUT_CONCURRENCY} keep-alive connections, {THROUGHPUT_SECONDS:.0f} s per"
        f" measurement after a warm-up, {THROUGHPUT_ROUNDS} alternating rounds (healthz,",
        "context from the cache, context with the cache off, …), mean of the rounds; the 1k",
        "folded session. *From the cache*: the server as deployed, every request after the",
        "first a hit (one indexed read validates it); *cache off*: a second server on the same",
        "database with `FOLDWISE_CONTEXT_CACHE_BYTES=0`, every request loads and assembles.",
        "",
        row(
            "backend",
            "healthz req/s",
            "context req/s, from the cache",
            "÷ healthz",
            "context req/s, cache off",
            "÷ healthz",
            "context errors",
        ),
        row("---", *["---:"] * 6),
    ]
    for run in results.backends:
        cached, uncached = run.throughput_ratio, run.uncached_ratio
        if cached is None or uncached is None:
            out.append(row(run.backend, *"–" * 5, "not measured"))
            continue
        out.append(
            row(
                run.backend,
                f"{statistics.mean(run.healthz_rps):.0f}",
                f"{statistics.mean(run.context_rps):.0f}",
                f"**{cached:.2f}**",
                f"{statistics.mean(run.uncached_rps):.0f}",
                f"**{uncached:.2f}**",
                run.context_errors,
            )
        )
    return [*out, "", *_wrk_check(results), ""]


def _wrk_check(results: Results) -> list[str]:
    """The same series measured by wrk, right after the Python generator, in each round."""
    if not wrk.available():
        return [f"Cross-check: {wrk.INSTALL_HINT}."]
    out = [
        "Cross-check with wrk (`-t1 -c32`, same durations, right after each measurement above):",
        "",
        row("backend", "healthz req/s", "from the cache", "÷ healthz", "cache off", "÷ healthz"),
        row("---", *["---:"] * 5),
    ]
    for run in results.backends:
        means = {k: statistics.mean(v) for k, v in run.wrk_rps.items() if v}
        if len(means) < 3:
            continue
        healthz = means["healthz"]
        out.append(
            row(
                run.backend,
                f"{healthz:.0f}",
                f"{means['cached']:.0f}",
                f"{means['cached'] / healthz:.2f}",
                f"{means['uncached']:.0f}",
                f"{means['uncached'] / healthz:.2f}",
            )
        )
    return out


def _counting(results: Results) -> list[str]:
    out = [
        "## 3. Counting a 1,000-message append batch",
        "",
        "The app's counter over normalized messages exactly as `MessageService` calls it, vs",
        "tiktoken `encode` on exactly the strings the counter encodes (recorded by a spy",
        "counter); 25 interleaved rounds, medians.",
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
        "rounds, medians. The counter remembers the counts of long texts (≥ 512 characters):",
        "*cold* empties that cache before each call (a history posted for the first time),",
        "*warm* re-posts the same history (what a client does before the next generation).",
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
            "Foldwise stateless in-process, cold (validate + count + assemble)",
            f"{a.stateless_seconds * 1000:.1f}",
            f"**{a.stateless_speedup:.2f}**",
            a.foldwise_kept,
        ),
        row(
            "Foldwise stateless in-process, warm (same history again)",
            f"{a.stateless_warm_seconds * 1000:.1f}",
            f"**{a.stateless_warm_speedup:.2f}**",
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
    speedups = http_speedups(results)
    if http and speedups is not None:
        out += [
            "",
            f"Over HTTP (production server, one request at a time, medians of {http['requests']}),"
            " interleaved with LangChain's trim in the benchmark process:",
            "",
            row("variant", "ms", "LangChain ÷ this", "messages kept"),
            row("---", "---:", "---:", "---:"),
            row(
                "LangChain `trim_messages` (interleaved)",
                f"{http['langchain_ms']:.1f}",
                "1.00",
                "–",
            ),
        ]
        for kind, label in (("cold", "a history never posted before"), ("warm", "re-posted")):
            out.append(
                row(
                    f"`POST /assemble-context`, {kind} ({label})",
                    f"{http[f'{kind}_ms']:.1f}",
                    f"**{speedups[kind]:.2f}**",
                    http.get("messages_included"),
                )
            )
    else:
        out += ["", "`POST /assemble-context` over HTTP: not measured in this run."]
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
        *(table := targets_table(results)),
        "",
        *plain_summary(table),
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
