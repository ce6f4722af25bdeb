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
ERROR_PARTS = " | "  # how a failure's informative lines are joined into one error item

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
      | [A-Z]\w*Error\ while\ (?:loading|importing)\ .*    # pytest: … while loading conftest
      | .*\bError\ code:\ \d{3}\b.*                       # an API error body
      | (?:error|ERROR|Error|fatal|FATAL|panic|PANIC)(?:\[[\w\-]+\])?[:!]\s*\S.*
      | npm\ ERR!.*
      | \*\*\ \([\w.]*(?:Error|Exception)\)\ .*                 # Elixir: ** (KeyError) …
      | Assertion\ with\ \S+\ failed.*                      # ExUnit
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
# A failing test's id: pytest `FAILED tests/a.py::t`, vitest/jest `FAIL  src/a.test.ts > t`,
# ExUnit `  1) test renders the page (MyApp.PageTest)`.
_FAILED_TEST = re.compile(
    r"^(?:(?:FAILED|ERROR)\s+\S+(?:::|\.py|_test|\.test\.)|FAIL\s+\S+\.(?:test|spec)\.\w+"
    r"|\d+\) test\s)"
)
# Where it failed: `tests/a.py:12: AssertionError`, ExUnit's `test/a_test.exs:35` and
# `└─ lib/a.ex:9: …`, vitest's `❯ src/a.test.ts:253:33`, a Python traceback frame.
_LOCATION = re.compile(r"^[^\w/.]{0,3}[\w./-]*\w\.[A-Za-z]\w{0,5}:\d+(?::\d+)?(?::|$|\s)")
_FRAME = re.compile(r'^File "[^"]+", line \d+')
# What was compared: pytest's `E  assert 2 == 3`, ExUnit's `code: assert html =~ "Review"`.
_COMPARISON = re.compile(r"^(?:E\s+)?(?:code:\s+)?assert\s\S")
# Further error lines of one result after its first (a second exception, another missing
# file), at most this many: the test ids and the tally say more.
MAX_OTHER_ERRORS = 3
# vitest ends with two tallies (`Test Files  1 failed (1)`, `Tests  1 failed (16)`).
MAX_TALLIES = 2
# Tallies: pytest `7 failed, 54 passed in 1.2s`, ExUnit `61 tests, 7 failures`, jest
# `Tests: 2 failed, 10 passed`, cargo `test result: FAILED. 3 passed; 1 failed`.
# Each half is searched on its own (tally() below): `A.*B` rescans the line from every A.
_TALLY_FAILED = re.compile(r"\b\d+ (?:failed|failures?|errors?)\b", re.IGNORECASE)
_TALLY_PASSED = re.compile(r"\b\d+ (?:passed|tests?|total)\b", re.IGNORECASE)
_TALLY_RAN = re.compile(r"\b\d+ (?:passed|tests?)\b", re.IGNORECASE)
# vitest/jest: `Tests  1 failed | 15 passed (16)`, `Test Files  1 failed (1)`; pytest when
# nothing passed: `===== 5 failed in 0.21s =====`.
_RUNNER_TALLY = re.compile(
    r"^(?:Test(?:s| Files| Suites):?\s+\d+ failed\b|[=\s]*\d+ failed\b.* in \d)"
)
# pytest's `===== 1 failed in 0.1s =====` framing (str.strip: a regex `[=\s]+$` is quadratic).
_TALLY_FRAME = "=-" + string.whitespace
# Framing around a shell result, not its content: Claude Code's `Exit code 1`, Codex CLI's
# `Chunk ID: …`, `Wall time: …`, `Process exited with code 1`, `Original token count: …`.
_FRAMING = re.compile(
    r"(?i)^(?:exit (?:code|status):? -?\d+|chunk id:.*|wall time:.*|original token count:.*|"
    r"output:|process exited with code -?\d+)$"
)
_STATUS_LINE = re.compile(r"(?i)\bexit")
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
    """The informative lines of a failing result, most telling first: the error (else, when no
    test failed either, the first line that says something), where it happened, the tally,
    what was compared, every failing test id, then further error lines."""
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    lines = [line for line in lines if not _DIFF_LINE.match(line)]
    error = first_error_line("\n".join(lines))
    failed = [line for line in lines if _FAILED_TEST.match(line)]
    tallies = [line.strip(_TALLY_FRAME) for line in lines if is_tally(line)][-MAX_TALLIES:]
    if error is None and not failed and not tallies:
        error = next((line for line in lines if not _FRAMING.match(line)), None)
    found = [error] if error and not _FAILED_TEST.match(error) else []
    found += [where for where in (_location(lines, error or (failed or [""])[0]),) if where]
    found += tallies + [line for line in lines if _COMPARISON.match(line)][:1] + failed
    others = [line for line in lines if _ERROR_LINE.match(line) and not _FAILED_TEST.match(line)]
    found += list(dict.fromkeys(others))[: MAX_OTHER_ERRORS + 1]
    found = found or [line for line in lines if _STATUS_LINE.search(line)][:1]
    return [cap(line) for line in dict.fromkeys(found)]


def joined(parts: list[str], limit: int) -> str:
    """`parts` joined by " | ", the first always, then each that still fits in `limit`
    characters; `(+N more)` says how many were left out."""
    kept = parts[:1]
    size = len(kept[0]) if kept else 0
    for part in parts[1:]:
        if size + len(ERROR_PARTS) + len(part) <= limit:
            kept.append(part)
            size += len(ERROR_PARTS) + len(part)
    left = len(parts) - len(kept)
    return ERROR_PARTS.join(kept + ([f"(+{left} more)"] if left else []))


def _location(lines: list[str], anchor: str) -> str | None:
    """The `file:line` of the failure: the first location at or after the failure's first
    line, else (a traceback's frames come before its error) the last one before it."""
    start = lines.index(anchor) if anchor in lines else 0
    before = None
    for n, line in enumerate(lines):
        if _LOCATION.match(line) or _FRAME.match(line):
            if n >= start:
                return line
            before = line
    return before


def is_tally(line: str) -> bool:
    """Whether `line` counts failures and passes (in either order), like a test run's tally."""
    return (
        _follows(line, _TALLY_FAILED, _TALLY_PASSED)
        or _follows(line, _TALLY_RAN, _TALLY_FAILED)
        or bool(_RUNNER_TALLY.match(line))
    )


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
