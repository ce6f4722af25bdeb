"""What the numbers were measured on: cores, CPU model, memory, load, commit, date."""

from __future__ import annotations

import os
import platform
import subprocess
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path


@dataclass(frozen=True, slots=True)
class Machine:
    cores: int
    cpu_model: str
    memory_gib: float
    load_average: tuple[float, float, float]
    python: str
    commit: str
    date: str


def cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def _memory_gib() -> float:
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal:"):
                return int(line.split()[1]) / 1024 / 1024
    except OSError:
        pass
    return 0.0


def _commit() -> str:
    def git(*args: str) -> str:
        return subprocess.run(
            ["git", *args], capture_output=True, text=True, check=True, timeout=10
        ).stdout.strip()

    try:
        commit = git("rev-parse", "--short", "HEAD")
        dirty = bool(git("status", "--porcelain", "--untracked-files=no"))
    except (OSError, subprocess.SubprocessError):
        return "unknown (not a git checkout)"
    return f"{commit} (with uncommitted changes)" if dirty else commit


def describe() -> Machine:
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    return Machine(
        cores=cores or 1,
        cpu_model=cpu_model(),
        memory_gib=_memory_gib(),
        load_average=os.getloadavg(),
        python=platform.python_version(),
        commit=_commit(),
        date=datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC"),
    )
