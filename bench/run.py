"""`make bench`: run every case, then write docs/benchmarks.md and its two charts.

In-process cases first (counting, assembly vs LangChain), then per database (SQLite, then
PostgreSQL in a database created for this run and dropped after it): seed, serve, measure.
A failing case is reported in the document instead of stopping the run; servers and the
PostgreSQL database are always cleaned up.
"""

from __future__ import annotations

import argparse
import contextlib
import sys
import time
import traceback
from collections.abc import Callable, Iterator
from pathlib import Path

from bench import cache, chart, report
from bench.cases_assemble import run_assemble
from bench.cases_server import run_backend
from bench.cases_tokens import run_counting
from bench.databases import postgres_available, postgres_database, sqlite_database
from bench.machine import describe
from bench.results import Results

DOCS = Path(__file__).resolve().parents[1] / "docs"
COMMAND = "make bench  (= .venv/bin/python -m bench.run)"


def _attempt(results: Results, what: str, action: Callable[[], None]) -> None:
    print(f"bench: {what} …", flush=True)
    started = time.perf_counter()
    try:
        action()
    except Exception as exc:  # one broken case must not hide the others' numbers
        traceback.print_exc()
        results.problems.append(f"{what} failed: {type(exc).__name__}: {exc}")
    print(f"bench: {what} done in {time.perf_counter() - started:.1f} s", flush=True)


def _backends(
    skip_postgres: bool,
) -> Iterator[tuple[str, Callable[[], contextlib.AbstractContextManager[str]]]]:
    yield "SQLite", sqlite_database
    if not skip_postgres:
        yield "PostgreSQL", postgres_database


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="bench.run", description=__doc__)
    parser.add_argument("--skip-postgres", action="store_true")
    parser.add_argument("--out", type=Path, default=DOCS, help="where the doc and charts go")
    args = parser.parse_args(argv)

    started = time.perf_counter()
    results = Results(machine=describe(), command=COMMAND)

    def counting() -> None:
        results.counting = [(shape, run_counting(shape)) for shape in ("anthropic", "openai")]

    def assembling() -> None:
        results.assemble = run_assemble()

    cache_section: list[str] = []

    def caching() -> None:
        cache_section.append(cache.section([cache.run_cache(b) for b in cache.BUDGETS]))

    _attempt(results, "counting (case 3)", counting)
    _attempt(results, "prompt cache vs LangChain (bench.cache)", caching)
    _attempt(results, "assembly vs LangChain (case 4)", assembling)

    skip_postgres = args.skip_postgres
    if not skip_postgres and (why := postgres_available()) is not None:
        results.problems.append(f"PostgreSQL skipped: {why}")
        skip_postgres = True
    for index, (backend, database) in enumerate(_backends(skip_postgres)):

        def serve(
            backend: str = backend,
            database: Callable[[], contextlib.AbstractContextManager[str]] = database,
            first: bool = index == 0,
        ) -> None:
            with database() as url:
                results.backends.append(run_backend(backend, url, with_assemble=first))

        _attempt(results, f"{backend} (cases 1, 2, 5)", serve)

    results.seconds = time.perf_counter() - started
    args.out.mkdir(parents=True, exist_ok=True)
    chart.latency_chart(results.backends, args.out / "bench-latency.png")
    chart.throughput_chart(results.backends, args.out / "bench-throughput.png")
    report.write(results, args.out / "benchmarks.md")
    if cache_section:  # a section of its own, kept by report.write on later runs
        cache.update_doc(args.out / "benchmarks.md", cache_section[0])
    print(
        f"bench: wrote {args.out / 'benchmarks.md'} in {results.seconds / 60:.1f} min", flush=True
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
