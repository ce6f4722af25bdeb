"""Can the next step be decided from the summary alone? Questions with mechanical answers.

Each question below is asked of every transcript; its answer is read from the raw messages
(never from a summary, never by the summarizer's code) and a summary answers it when the
answer string appears in it, matched as evals/real_facts.py matches facts (normalized, first
50 characters, on word boundaries; a failed command with a failure word on its line). A
question a transcript gives no answer to (no failing command in a session without failures)
is not asked of it.

The questions are what an agent resuming the work needs first: what it is doing (the task,
the user's last ask), where it stopped (the last file changed, the last command), what is
broken and why (the last failure, its cause, what still fails) and what it must not do.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from evals.real_facts import (
    Call,
    Fact,
    _file_key,
    _written,
    command_key,
    informative_lines,
    key,
    outcomes,
    user_sentences,
)

# A user sentence that forbids something (the answer to "what did the user forbid?").
_FORBIDS = re.compile(
    r"(?i)\b(?:don't|do not|never|must not|mustn't|shouldn't|should not|avoid|not allowed|"
    r"no longer|stop)\b"
)
# "Great, thanks" says nothing to act on: the user's last ask has at least this many words.
MIN_ASK_WORDS = 4
# The task is restated when any of the first message's first sentences is (a slash command's
# template or an issue text opens with framing before the ask).
TASK_SENTENCES = 3
# Harness framing of a first message, not the person's words: Aider's log header, SWE-agent's
# issue preamble (its CTF preamble names the challenge and stays).
_FRAMING = re.compile(
    r"^(?:# aider chat started at|We're currently solving the following issue within|"
    r"Here's the issue text:|ISSUE:)"
)


@dataclass
class _Run:
    """What the transcript says, in order: the answers are read off this."""

    task: list[str] = field(default_factory=list)
    last_ask: str | None = None
    forbidden: str | None = None
    last_modified: str | None = None
    last_command: str | None = None
    failures: list[tuple[str | None, list[str]]] = field(default_factory=list)
    status: dict[str, bool] = field(default_factory=dict)  # command key → last run failed


@dataclass(frozen=True)
class Question:
    name: str
    text: str
    answer: Callable[[_Run], Fact | None]


def _last_failed_command(run: _Run) -> Fact | None:
    failed = [command for command, _ in run.failures if command]
    return Fact("answer", [failed[-1]], failed=True) if failed else None


def _still_failing(run: _Run) -> Fact | None:
    """The newest failing command that never passed afterwards."""
    open_ = [c for c, _ in run.failures if c and run.status.get(c)]
    return Fact("answer", [open_[-1]], failed=True) if open_ else None


def _cause(run: _Run) -> Fact | None:
    return Fact("answer", run.failures[-1][1]) if run.failures else None


def _text(value: str | None) -> Fact | None:
    return Fact("answer", [value]) if value else None


QUESTIONS = (
    Question("task", "What is the task?", lambda r: Fact("answer", r.task) if r.task else None),
    Question("last ask", "What did the user ask for last?", lambda r: _text(r.last_ask)),
    Question("forbidden", "What did the user forbid (latest)?", lambda r: _text(r.forbidden)),
    Question("last change", "Which file was changed last?", lambda r: _text(r.last_modified)),
    Question("last command", "Which command ran last?", lambda r: _text(r.last_command)),
    Question("failed command", "Which command failed last?", _last_failed_command),
    Question("why", "Why did the last failure happen?", _cause),
    Question("still open", "Which failing command has not passed since?", _still_failing),
)


def read_run(raw: list[dict[str, Any]]) -> _Run:
    run = _Run()
    calls: dict[str, Call] = {}
    for message in raw:
        for call, text, failed in outcomes(message, calls):
            command = command_key(call.command) if call.command else None
            if command:
                run.last_command = command
                run.status[command] = failed
            if failed:
                lines = [k for k in (key(line) for line in informative_lines(text)) if k]
                if lines:
                    run.failures.append((command, lines))
                continue
            run.last_modified = next(
                (_file_key(p) for p in reversed(_written(call))), run.last_modified
            )
        if message.get("role") == "user":
            _read_user(run, list(user_sentences(message)))
    return run


def _read_user(run: _Run, said: list[str]) -> None:
    sentences = [s for s in said if not _FRAMING.match(s)]
    asks = [s for s in sentences if len(s.split()) >= MIN_ASK_WORDS]
    if not run.task and sentences:
        run.task = [key(s) for s in sentences[:TASK_SENTENCES]]
    if asks:
        run.last_ask = key(asks[0])
    forbids = [s for s in sentences if _FORBIDS.search(s)]
    if forbids:
        run.forbidden = key(forbids[-1])


def asked(raw: list[dict[str, Any]]) -> list[tuple[Question, Fact]]:
    """The questions this transcript answers, each with its answer."""
    run = read_run(raw)
    pairs = [(q, q.answer(run)) for q in QUESTIONS]
    return [(q, fact) for q, fact in pairs if fact is not None]
