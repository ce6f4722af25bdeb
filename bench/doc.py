"""docs/benchmarks.md: Markdown templates filled in, sections replaced in place.

A benchmark renders its template (bench/*.md.tmpl, `$name` placeholders) and hands the text
to `write`, which replaces each `## ` section of the document it contains and leaves the
others (the hand-written analysis, the other benchmarks' sections) as they are.
"""

from __future__ import annotations

import os
import platform
import re
import subprocess
from datetime import UTC, datetime
from pathlib import Path
from string import Template
from typing import Any

HERE = Path(__file__).resolve().parent
DOC = HERE.parent / "docs" / "benchmarks.md"


def render(template: str, **values: Any) -> str:
    return Template((HERE / template).read_text("utf-8")).substitute(values)


def row(*cells: object) -> str:
    return "| " + " | ".join(str(cell) for cell in cells) + " |"


def table(header: list[str], rows: list[list[Any]], align: str = "") -> str:
    """A Markdown table; `align` gives a column's alignment by letter (l or r), left by default."""
    marks = ["---:" if a == "r" else "---" for a in align.ljust(len(header), "l")]
    return "\n".join([row(*header), row(*marks), *(row(*cells) for cells in rows)])


def _sections(text: str) -> list[str]:
    return re.split(r"(?m)^(?=## )", text)


def write(text: str, path: Path = DOC) -> None:
    """Replace the head and each `## ` section of `path` that `text` has; append new ones."""
    new = _sections(text.strip() + "\n")
    old = _sections(path.read_text("utf-8")) if path.exists() else [""]
    titles = {part.split("\n", 1)[0]: part for part in new[1:]}
    merged = [new[0] if new[0].strip() else old[0]]
    for part in old[1:]:
        merged.append(titles.pop(part.split("\n", 1)[0], part))
    merged += titles.values()
    path.write_text("".join(p.rstrip() + "\n\n" for p in merged).rstrip() + "\n", "utf-8")


def machine() -> dict[str, str]:
    def git(*args: str) -> str:
        return subprocess.run(["git", *args], capture_output=True, text=True).stdout.strip()

    cpu = next(
        (line.split(":", 1)[1].strip() for line in Path("/proc/cpuinfo").read_text().splitlines()
         if line.startswith("model name")),
        platform.processor(),
    )  # fmt: skip
    dirty = " (with uncommitted changes)" if git("status", "--porcelain", "-uno") else ""
    return {
        "date": datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC"),
        "commit": git("rev-parse", "--short", "HEAD") + dirty,
        "python": platform.python_version(),
        "cores": str(len(os.sched_getaffinity(0))),
        "cpu": cpu,
        "load": " / ".join(f"{value:.2f}" for value in os.getloadavg()),
    }
