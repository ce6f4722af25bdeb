"""How the summary quotes commands and paths: in backticks, or bare at a tight budget.

A backtick pair costs about two tokens a line; under a `Commands:` or `Files …:` header a bare
command or path reads the same, so a tight summary names more of them. Only text that reads
back unambiguously goes bare: a command without backticks or a ` → ` (the status marker), a
path without whitespace, commas or backticks (a compact line lists names with ", ").
"""

from __future__ import annotations

import re

STATUS_MARK = " → "
_BARE_PATH = re.compile(r"[^\s,`]+")


def quote_command(command: str, compact: bool) -> str:
    bare = compact and "`" not in command and STATUS_MARK not in command
    return command if bare else f"`{command}`"


def quote_path(path: str, compact: bool) -> str:
    bare = compact and _BARE_PATH.fullmatch(path) is not None
    return path if bare else f"`{path}`"
