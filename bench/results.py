"""One benchmark run's results, as report.py renders them."""

from __future__ import annotations

from dataclasses import dataclass, field

from bench.cases_assemble import AssembleResult
from bench.cases_server import BackendRun
from bench.cases_tokens import CountingResult
from bench.machine import Machine


@dataclass(slots=True)
class Results:
    machine: Machine
    command: str
    seconds: float = 0.0
    counting: list[tuple[str, CountingResult]] = field(default_factory=list)
    assemble: AssembleResult | None = None
    backends: list[BackendRun] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
