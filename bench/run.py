"""`make bench`: every case, then docs/benchmarks.md from bench/report.md.tmpl.

In-process cases first (counting, assembly vs LangChain, the prompt cache), then per database
(SQLite, then PostgreSQL in a database made for the run): seed, serve, load with wrk; then
the turn (bench/turn.py: append one message, read the context, on both databases). A case
that fails is reported in the document instead of stopping the run.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
import traceback
from collections.abc import Callable
from typing import Any

from bench import cache, doc, http_cases, inprocess, lifecycle, turn, wrk
from bench.servers import database, postgres_missing

SIZES = [1_000, 10_000, 100_000, 1_000_000]
LATENCY_TARGET, COUNTING_TARGET, SPEEDUP_TARGET = 1.1, 1.2, 5.0
CACHED_TARGET = {"SQLite": 0.3, "PostgreSQL": 0.2}
UNCACHED_TARGET = 0.04


class Run:
    def __init__(self) -> None:
        self.results: dict[str, Any] = {}
        self.problems: list[str] = []
        self.targets: list[list[Any]] = []

    def attempt(self, name: str, action: Callable[[], Any]) -> None:
        print(f"bench: {name} …", flush=True)
        started = time.perf_counter()
        try:
            self.results[name] = action()
        except Exception as exc:  # one broken case must not hide the others' figures
            traceback.print_exc()
            self.problems.append(f"{name}: {type(exc).__name__}: {exc}")
        print(f"bench: {name} done in {time.perf_counter() - started:.0f} s", flush=True)

    def target(
        self, figure: str, value: float, goal: float, at_most: bool = False, noise: float = 0
    ) -> None:
        """`noise`: a control ratio; a miss within it × the goal is said to be noise."""
        ok = value <= goal if at_most else value >= goal
        verdict = "**met**" if ok else "**missed**"
        if not ok and noise and value <= noise * goal:
            verdict += " (within this run's noise)"
        self.targets.append([figure, f"{'≤' if at_most else '≥'} {goal}", f"{value:.2f}", verdict])


def _ratio(values: list[float], bases: list[float]) -> float:
    return statistics.median(v / b for v, b in zip(values, bases, strict=True))


def _ms(value: float) -> str:
    return f"{value:.2f}" if value < 100 else f"{value:.0f}"


def _latency(run: Run, backends: list[str]) -> dict[str, str]:
    rows, held, appends = [], [], []
    for backend in backends:
        if not (result := run.results.get(backend)):
            continue
        lat, base = result["latency"], result["latency"][str(SIZES[0])]
        # A ratio is the median of the rounds' ratios: series of one round run seconds apart,
        # so a neighbour's load that lasts longer than a round cancels out.
        div = {n: {p: _ratio(f[p], base[p]) for p in ("p50", "p99")} for n, f in lat.items()}
        ratio = {name: max(d.values()) for name, d in div.items()}
        for name, f in lat.items():
            f = {**f, "p50": statistics.median(f["p50"]), "p99": statistics.median(f["p99"])}
            seed = result["seed_s"].get(int(name)) if name.isdigit() else None
            label = {"control": "again (control)", "cached": "from the cache"}.get(name)
            rows.append([backend, f"{int(name):,}" if seed else f"{SIZES[0]:,} {label}"])
            rows[-1] += [f"{seed:.1f}" if seed else "–", f["requests"], _ms(f["p50"])]
            rows[-1] += [_ms(f["p99"]), f"**{div[name]['p50']:.2f}**"]
            rows[-1] += [f"**{div[name]['p99']:.2f}**"]
        for group in ([10_000, 100_000], [1_000_000]):
            if sizes := [s for s in group if str(s) in lat]:
                what = " and ".join(f"{s // 1000}k" if s < 10**6 else "1M" for s in sizes)
                figure = f"context p50 and p99 at {what} ÷ 1k, {backend}"
                spread = max(max(r, 1 / r) for r in div["control"].values())  # either way
                figure += f" (control 1k ÷ 1k off by {spread:.2f}×)"
                worst = max(ratio[str(s)] for s in sizes)
                run.target(figure, worst, LATENCY_TARGET, True, spread)
        c = result["check"]
        held.append(
            f"{backend}: the 1k session's context holds summary version {c['version']} and "
            f"{c['included']} of {c['total']} messages, {c['tokens']:,} tokens."
        )
        appends.append(f"{backend}: " + ", ".join(f"{s:.2f} s" for s in result["append_s"]))
    header = ["backend", "messages", "seed s", "requests", "p50 ms", "p99 ms", "p50 ÷ 1k"]
    return {
        "latency_table": doc.table([*header, "p99 ÷ 1k"], rows, "llrrrrrr"),
        "held": "\n".join(held),
        "appends": "; ".join(appends) or "not measured",
    }


def _throughput(run: Run, backends: list[str]) -> str:
    rows = []
    for backend in backends:
        for workers, t in (run.results.get(backend) or {}).get("throughput", {}).items():
            rows.append([backend, workers, f"{t['healthz']:.0f}", f"{t['cached']:.0f}"])
            rows[-1] += [f"**{t['cached_ratio']:.2f}**", f"{t['uncached']:.0f}"]
            rows[-1] += [f"**{t['uncached_ratio']:.2f}**"]
            if workers == 1:
                figure = f"context ÷ healthz req/s, one worker, {backend}"
                run.target(f"{figure}, from the cache", t["cached_ratio"], CACHED_TARGET[backend])
                run.target(f"{figure}, cache off", t["uncached_ratio"], UNCACHED_TARGET)
    header = ["backend", "workers", "healthz req/s", "context, from the cache", "÷ healthz"]
    return doc.table([*header, "context, cache off", "÷ healthz"], rows, "lrrrrrr")


def _counting(run: Run) -> str:
    rows = []
    for c in run.results.get("counting", []):
        ratio = c["app"] / c["encode"]
        rows.append([c["shape"], f"{c['tokens']:,}", f"{c['strings']:,}", f"{c['app']:.1f}"])
        rows[-1] += [f"{c['encode']:.1f}", f"{c['ordinary']:.1f}", f"**{ratio:.2f}**"]
        figure = f"append counting ÷ tiktoken encode, 1,000 {c['shape']} messages"
        run.target(figure, ratio, COUNTING_TARGET, at_most=True)
    header = ["shape", "tokens", "strings", "app ms", "encode ms", "encode_ordinary ms"]
    return doc.table([*header, "app ÷ encode"], rows, "lrrrrrr")


def _assembly(run: Run) -> dict[str, str]:
    a = run.results.get("assembly")
    http = next((r["assemble_http"] for r in run.results.values() if "assemble_http" in r), None)
    rows, http_rows = [], []
    if a:
        lc = a["langchain"]
        rows.append(["LangChain `trim_messages`", f"{lc:.1f}", "1.00", a["langchain_kept"]])
        for key, label in (
            ("cold", "Foldwise stateless, cold (validate + count + assemble)"),
            ("warm", "Foldwise stateless, warm (same history again)"),
            ("engine", "Foldwise `assemble()` alone, counts known (as the session route)"),
        ):
            rows.append([label, f"{a[key]:.1f}", f"**{lc / a[key]:.2f}**", a["kept"]])
            if key != "engine":
                figure = f"LangChain ÷ Foldwise stateless in-process, {key}"
                run.target(figure, lc / a[key], SPEEDUP_TARGET)
    if http:
        lc = http["langchain"]
        http_rows.append(["LangChain `trim_messages` (interleaved)", f"{lc:.1f}", "1.00"])
        for key in ("cold", "warm"):
            speedup = lc / http[key]
            http_rows.append([f"`POST /assemble-context`, {key}", f"{http[key]:.1f}"])
            http_rows[-1].append(f"**{speedup:.2f}**")
            run.target(f"LangChain ÷ `POST /assemble-context` over HTTP, {key}", speedup, 5.0)
    header = ["variant", "ms", "LangChain ÷ this"]
    return {
        "assembly_table": doc.table([*header, "messages kept"], rows, "lrrr"),
        "assembly_http_table": doc.table(header, http_rows, "lrr"),
        "assembly_tokens": f"{a['tokens']:,}" if a else "–",
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="bench.run", description=__doc__)
    parser.add_argument("--skip-postgres", action="store_true")
    parser.add_argument("--max-size", type=int, default=SIZES[-1], help="largest session")
    parser.add_argument("--workers", type=int, default=len(os.sched_getaffinity(0)))
    args = parser.parse_args(argv)
    wrk.require()
    started, machine = time.perf_counter(), doc.machine()
    run, sizes = Run(), [size for size in SIZES if size <= args.max_size]
    run.attempt("counting", lambda: [inprocess.counting(s) for s in ("anthropic", "openai")])
    run.attempt("assembly", inprocess.assembly)
    run.attempt("prompt cache", cache.runs)
    backends = ["SQLite"]
    if not args.skip_postgres and (why := postgres_missing()) is None:
        backends.append("PostgreSQL")
    elif not args.skip_postgres:
        run.problems.append(f"PostgreSQL skipped: {why}")
    for index, backend in enumerate(backends):

        def serve(backend: str = backend, first: bool = index == 0) -> dict[str, Any]:
            with database(backend) as url:
                return http_cases.run_backend(url, sizes, args.workers, first)

        run.attempt(backend, serve)
    run.attempt("turns", lambda: turn.measure(args.skip_postgres or "PostgreSQL" not in backends))
    run.attempt("lifecycle", lambda: lifecycle.measure("PostgreSQL" not in backends))
    turn_section = turn.section(run.results["turns"], run.targets) if "turns" in run.results else ""
    tables = {**_latency(run, backends), "throughput_table": _throughput(run, backends)}
    tables |= {"counting_table": _counting(run), **_assembly(run)}
    verdicts = {
        w: [t[0] for t in run.targets if t[3].startswith(f"**{w}")] for w in ("met", "missed")
    }
    text = doc.render(
        "report.md.tmpl",
        **machine,
        **tables,
        args=" ".join(argv if argv is not None else sys.argv[1:]),
        minutes=f"{(time.perf_counter() - started) / 60:.1f}",
        workers=args.workers,
        targets=doc.table(
            ["Figure (ratio, same run)", "Target", "Measured", "Verdict"], run.targets, "llrl"
        ),
        met="; ".join(verdicts["met"]) or "none",
        missed="; ".join(verdicts["missed"]) or "none",
        latency_rounds=http_cases.LATENCY_ROUNDS,
        latency_seconds=http_cases.LATENCY_SECONDS,
        connections=http_cases.CONNECTIONS,
        throughput_seconds=http_cases.THROUGHPUT_SECONDS,
        throughput_rounds=http_cases.THROUGHPUT_ROUNDS,
        assemble_rounds=http_cases.ASSEMBLE_ROUNDS,
        problems="\n".join(f"- {p}" for p in run.problems) or "None.",
    )
    if "prompt cache" in run.results:
        text += "\n\n" + cache.section(run.results["prompt cache"])
    text += "\n\n" + turn_section
    text += "\n\n" + run.results.get("lifecycle", "")
    doc.write(text)
    print(f"bench: wrote {doc.DOC} in {(time.perf_counter() - started) / 60:.1f} min")
    return 0


if __name__ == "__main__":
    sys.exit(main())
