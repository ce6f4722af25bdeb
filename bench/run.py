"""`make bench`: every case, then docs/benchmarks.md from bench/report.md.tmpl.

In process: counting an append batch, assembling vs LangChain and the first context of a
2M-character tool output (bench/inprocess.py), then
the prompt cache (bench/cache.py), media counting (bench/media.py) and a fold's cost at the
provider (bench/fold_cost.py); over HTTP, the turn
(bench/turn.py: append one message, read the context, on SQLite and PostgreSQL). A case that
fails is reported in the document instead of stopping the run.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import time
import traceback
from collections.abc import Callable
from typing import Any

from bench import cache, fold_cost, inprocess, media, turn
from bench.harness import (
    Target,
    machine,
    postgres_missing,
    render,
    require_wrk,
    table,
    targets_table,
    write,
)

COUNTING_TARGET, SPEEDUP_TARGET = 1.2, 5.0
ASSEMBLY_VARIANTS = {
    "cold": "Foldwise stateless, cold (validate + count + assemble)",
    "warm": "Foldwise stateless, warm (same history again)",
    "engine": "Foldwise `assemble()` alone, counts known (as the session route)",
}


class Run:
    def __init__(self) -> None:
        self.results: dict[str, Any] = {}
        self.problems: list[str] = []
        self.targets: list[Target] = []

    def attempt(self, name: str, action: Callable[[], Any]) -> None:
        print(f"bench: {name} …", flush=True)
        started = time.perf_counter()
        try:
            self.results[name] = action()
        except Exception as exc:  # one broken case must not hide the others' figures
            traceback.print_exc()
            self.problems.append(f"{name}: {type(exc).__name__}: {exc}")
        print(f"bench: {name} done in {time.perf_counter() - started:.0f} s", flush=True)


def _counting(run: Run) -> str:
    rows = []
    for c in run.results.get("counting", []):
        ratio = c["app"] / c["encode"]
        rows.append([c["shape"], f"{c['tokens']:,}", f"{c['strings']:,}", f"{c['app']:.1f}"])
        rows[-1] += [f"{c['encode']:.1f}", f"{c['ordinary']:.1f}", f"**{ratio:.2f}**"]
        figure = f"append counting ÷ tiktoken encode, 1,000 {c['shape']} messages"
        run.targets.append(Target(figure, ratio, COUNTING_TARGET, at_most=True))
    header = ["shape", "tokens", "strings", "app ms", "encode ms", "encode_ordinary ms"]
    return table([*header, "app ÷ encode"], rows, "lrrrrrr")


def _assembly(run: Run) -> str:
    if not (a := run.results.get("assembly")):
        return "Not measured (see *Problems in this run*)."
    lc = a["langchain"]
    rows = [["LangChain `trim_messages`", f"{lc:.1f}", "1.00", a["langchain_kept"]]]
    for key, label in ASSEMBLY_VARIANTS.items():
        rows.append([label, f"{a[key]:.1f}", f"**{lc / a[key]:.2f}**", a["kept"]])
        if key != "engine":
            figure = f"LangChain ÷ Foldwise stateless in-process, {key}"
            run.targets.append(Target(figure, lc / a[key], SPEEDUP_TARGET))
    return table(["variant", "ms", "LangChain ÷ this", "messages kept"], rows, "lrrr")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="bench.run", description=__doc__)
    parser.add_argument("--skip-postgres", action="store_true")
    args = parser.parse_args(argv)
    require_wrk()
    started, run = time.perf_counter(), Run()
    run.attempt("counting", lambda: [inprocess.counting(s) for s in ("anthropic", "openai")])
    run.attempt("assembly", inprocess.assembly)
    run.attempt("long output", inprocess.long_output)
    run.attempt("prompt cache", cache.runs)
    run.attempt("media", media.measure)
    run.attempt("fold cost", lambda: asyncio.run(fold_cost.measure()))
    if not args.skip_postgres and (why := postgres_missing()):
        run.problems.append(f"PostgreSQL skipped: {why}")
    run.attempt("turns", lambda: turn.measure(args.skip_postgres))
    tables = {"counting_table": _counting(run), "assembly_table": _assembly(run)}
    tokens = run.results.get("assembly", {}).get("tokens")
    if "media" in run.results:
        run.targets = media.targets(run.results["media"]) + run.targets
    if "long output" in run.results:
        run.targets += inprocess.long_output_targets(run.results["long output"])
    if "fold cost" in run.results:
        run.targets += run.results["fold cost"][1]
    if "turns" in run.results:
        run.targets = turn.targets(run.results["turns"]) + run.targets
    verdicts = {met: [t.figure for t in run.targets if t.met == met] for met in (True, False)}
    text = render(
        "report.md.tmpl",
        **machine(),
        **tables,
        args=" ".join(argv if argv is not None else sys.argv[1:]),
        minutes=f"{(time.perf_counter() - started) / 60:.1f}",
        targets=targets_table(run.targets),
        met="; ".join(verdicts[True]) or "none",
        missed="; ".join(verdicts[False]) or "none",
        assembly_tokens=f"{tokens:,}" if tokens else "–",
        problems="\n".join(f"- {p}" for p in run.problems) or "None.",
    )
    if "prompt cache" in run.results:
        text += "\n\n" + cache.section(run.results["prompt cache"])
    if "media" in run.results:
        text += "\n\n" + media.section(run.results["media"])
    if "long output" in run.results:
        text += "\n\n" + inprocess.long_output_section(run.results["long output"])
    if "fold cost" in run.results:
        text += "\n\n" + run.results["fold cost"][0]
    if "turns" in run.results:
        text += "\n\n" + turn.section(run.results["turns"])
    write(text)
    print(f"bench: wrote the document in {(time.perf_counter() - started) / 60:.1f} min")
    return 0


if __name__ == "__main__":
    sys.exit(main())
