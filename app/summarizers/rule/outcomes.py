"""Reading tool results: exit status and the exact first error line.

The error line is quoted verbatim (only surrounding whitespace is stripped), because the next
model turn will grep for it: a paraphrased error string is useless.
"""

from __future__ import annotations

import re

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
                return _cap(line)
    for line in lines:
        if _ERROR_LINE.match(line.strip()):
            return _cap(line.strip())
    return None


def _cap(line: str) -> str:
    return line if len(line) <= MAX_ERROR_LINE_CHARS else line[:MAX_ERROR_LINE_CHARS] + " …"
