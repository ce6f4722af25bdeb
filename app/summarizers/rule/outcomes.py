"""Reading tool results: exit status, the exact first error line, and a failure's informative lines.

Error lines are quoted verbatim (only surrounding whitespace is stripped), because the next
model turn will grep for them: a paraphrased error string is useless. A failing test run says
three useful things — the exception or assertion, which tests failed, and the tally — so
`error_lines` keeps each of them (and skips pytest's diff lines such as `E     - flowing`).
"""

from __future__ import annotations

import re
import string

MAX_ERROR_LINE_CHARS = 300

_EXIT_PATTERNS = [
    re.compile(r"(?i)\bexit(?:ed)?(?: with)?[ _](?:code|status)\b[\s:=]*(-?\d+)"),
    re.compile(r"(?i)returned non-zero exit status (\d+)"),
    re.compile(r"(?i)\bexit_code[\"']?\s*[:=]\s*(-?\d+)"),
    re.compile(r"(?i)\[(?:process )?exited (-?\d+)\]"),
]
_TRACEBACK = "Traceback (most recent call last):"
_EXCEPTION = re.compile(
    r"^(?:[A-Za-z_][\w.]*\.)?[A-Z]\w*(?:Error|Exception|Failure|Exit|Interrupt)\b"
)
_ERROR_LINE = re.compile(
    r"""^(?:
        E\s{2,}\S.*                                        # pytest assertion detail
      | FAILED\s+\S.*                                      # pytest short summary
      | (?:[A-Za-z_][\w.]*\.)?[A-Z]\w*(?:Error|Exception)\b:.*   # exceptions (Python, JS, Java)
      | (?:error|ERROR|Error|fatal|FATAL|panic|PANIC)(?:\[[\w\-]+\])?[:!]\s*\S.*
      | npm\ ERR!.*
      | \*\*\ \([\w.]*(?:Error|Exception)\)\ .*                 # Elixir: ** (KeyError) …
      | \S+:\d+(?::\d+)?:\s*(?:error|fatal\ error):.*      # compilers: file:line:col: error:
      | \S+\(\d+,\d+\):\s*error\ .*                        # tsc
      | error\ (?:TS|CS)\d+:.*
      | .*:\ command\ not\ found
      | .*No\ such\ file\ or\ directory.*
      | .*Permission\ denied.*
      | .*Segmentation\ fault.*
    )$""",
    re.VERBOSE,
)


# pytest's assertion diff (`E     - expected`, `E     + actual`, `E     ?  ^`): not the error.
_DIFF_LINE = re.compile(
    r"^E\s+(?:[-+?]\s|\.\.\.|Full diff|Use -v|At index|Left contains|Right contains)"
)
_FAILED_TEST = re.compile(r"^(?:FAILED|ERROR)\s+\S+(?:::|\.py|_test|\.test\.)")
# Tallies: pytest `7 failed, 54 passed in 1.2s`, ExUnit `61 tests, 7 failures`, jest
# `Tests: 2 failed, 10 passed`, cargo `test result: FAILED. 3 passed; 1 failed`.
# Each half is searched on its own (tally() below): `A.*B` rescans the line from every A.
_TALLY_FAILED = re.compile(r"\b\d+ (?:failed|failures?|errors?)\b", re.IGNORECASE)
_TALLY_PASSED = re.compile(r"\b\d+ (?:passed|tests?|total)\b", re.IGNORECASE)
_TALLY_RAN = re.compile(r"\b\d+ (?:passed|tests?)\b", re.IGNORECASE)
# pytest's `===== 1 failed in 0.1s =====` framing (str.strip: a regex `[=\s]+$` is quadratic).
_TALLY_FRAME = "=-" + string.whitespace
# Framing around a shell result, not its content: Claude Code's `Exit code 1`, Codex CLI's
# `Chunk ID: …`, `Wall time: …`, `Process exited with code 1`, `Original token count: …`.
_FRAMING = re.compile(
    r"(?i)^(?:exit (?:code|status):? -?\d+|chunk id:.*|wall time:.*|original token count:.*|"
    r"output:|process exited with code -?\d+)$"
)
_STATUS_LINE = re.compile(r"(?i)\bexit")
MAX_FAILED_IDS = 3
_FAILED_COUNT = re.compile(r"(?i)\b[1-9]\d* (?:failed|failures?)\b")


def exit_code(text: str) -> int | None:
    """The exit status a shell tool reported, if its output says."""
    for pattern in _EXIT_PATTERNS:
        match = pattern.search(text)
        if match:
            return int(match.group(1))
    return None


def first_error_line(text: str) -> str | None:
    """The line naming the error: a traceback's final line, else the first error-looking one."""
    lines = [line.rstrip() for line in text.splitlines()]
    if _TRACEBACK in text:
        start = max(i for i, line in enumerate(lines) if line.strip() == _TRACEBACK)
        for line in lines[start + 1 :]:
            if line and not line[0].isspace() and _EXCEPTION.match(line):
                return cap(line)
    for line in lines:
        if _ERROR_LINE.match(line.strip()):
            return cap(line.strip())
    return None


def error_lines(text: str) -> list[str]:
    """The informative lines of a failing result: error, failed test ids, tally; in that order."""
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    error = first_error_line("\n".join(line for line in lines if not _DIFF_LINE.match(line)))
    failed = [line for line in lines if _FAILED_TEST.match(line)]
    tally = next((line.strip(_TALLY_FRAME) for line in reversed(lines) if is_tally(line)), None)
    found = [error] if error and not _FAILED_TEST.match(error) else []
    found += [cap(line) for line in failed[:MAX_FAILED_IDS]]
    if len(failed) > MAX_FAILED_IDS:
        found.append(f"(+{len(failed) - MAX_FAILED_IDS} more FAILED)")
    found += [cap(tally)] if tally else []
    if not found:  # no recognisable error: the first line that says something, else the status
        found = [cap(line) for line in lines if not _FRAMING.match(line)][:1]
        found = found or [cap(line) for line in lines if _STATUS_LINE.search(line)][:1]
    return list(dict.fromkeys(found))


def is_tally(line: str) -> bool:
    """Whether `line` counts failures and passes (in either order), like a test run's tally."""
    return _follows(line, _TALLY_FAILED, _TALLY_PASSED) or _follows(line, _TALLY_RAN, _TALLY_FAILED)


def _follows(line: str, first: re.Pattern[str], then: re.Pattern[str]) -> bool:
    """Whether a `then` match starts after the end of the first `first` match."""
    match = first.search(line)
    return match is not None and then.search(line, match.end()) is not None


def failed_tally(text: str) -> bool:
    """Whether a test tally in `text` reports failures (`7 failed`, `3 failures`)."""
    return bool(_FAILED_COUNT.search(text))


def cap(line: str, limit: int = MAX_ERROR_LINE_CHARS) -> str:
    """`line` cut to `limit` characters, with " …" when something was cut."""
    return line if len(line) <= limit else line[:limit] + " …"
