"""Files a shell command reads and writes, found with a real shell lexer.

`shlex` (POSIX mode, punctuation characters) splits the command into words and operators, so a
`>` inside quotes, a `python -c '…'` program or a `git commit -m "…"` message is one word and
never a redirection. Heredoc bodies (`cat <<'EOF' … EOF`) are removed before lexing: they are
data, not shell. Only real redirection targets and the file arguments of a few well-known
programs (cat, sed -i, tee, cp, mv, touch, rm) become files.
"""

from __future__ import annotations

import re
import shlex
from collections import deque
from collections.abc import Iterator

from app.summarizers.rule.paths import is_path_like

FileStatus = str  # "read" | "written" | "created" | "modified"

_HEREDOC = re.compile(r"(?<!<)<<(-?)\s*(['\"]?)([A-Za-z_][\w.\-]*)\2")
_PUNCTUATION = "();<>|&\n"
_BLANKS = " \t\r"
# Punctuation and blanks inside quotes, swapped for private-use characters while lexing.
_PROTECT = {c: chr(0xE000 + n) for n, c in enumerate(_PUNCTUATION + _BLANKS)}
_UNPROTECT = str.maketrans({v: k for k, v in _PROTECT.items()})
_ASSIGNMENT = re.compile(r"^[A-Za-z_]\w*=")
_WRAPPERS = {"sudo", "time", "nohup", "env", "exec", "command", "builtin", "nice"}
READERS = {"cat", "head", "tail", "less", "more", "bat", "nl"}
NOT_FILES = {"/dev/null", "/dev/stdout", "/dev/stderr", "-"}
# shlex builds each token one character at a time (`token = token + char`), so its work is
# quadratic in the longest token. No path is longer than PATH_MAX, and no operator longer
# than a few characters: longer words become LONG_WORD and longer operator runs one `;`.
MAX_WORD_CHARS = 4096
MAX_OPERATOR_CHARS = 8
LONG_WORD = "…"
_WORD = re.compile(f"[^{re.escape(_PUNCTUATION + _BLANKS)}]+")
_OPERATOR = re.compile(f"[{re.escape(_PUNCTUATION)}]+")


def strip_heredocs(command: str) -> str:
    """`command` without heredoc bodies: each body, up to its delimiter line, is removed."""
    lines = command.split("\n")
    kept: list[str] = []
    pending: deque[tuple[bool, str]] = deque()  # (tabs stripped, delimiter) in order
    for line in lines:
        if pending:
            dash, word = pending[0]
            if (line.lstrip("\t") if dash else line).strip() == word:
                pending.popleft()
            continue
        kept.append(line)
        pending = deque((m.group(1) == "-", m.group(3)) for m in _HEREDOC.finditer(line))
    return "\n".join(kept)


def tokens(command: str) -> list[str] | None:
    """Shell words and operators of `command`, as the shell would split them."""
    raw = _raw_tokens(command)
    return None if raw is None else [word.translate(_UNPROTECT) for word in raw]


def _raw_tokens(command: str) -> list[str] | None:
    """Shell words and operators of `command` (heredoc bodies removed); None if it does not lex.

    POSIX shlex removes quotes, so a quoted `">"` would come out looking like the operator:
    punctuation inside quotes is swapped for private-use characters before lexing and swapped
    back in the words afterwards.
    """
    text = _shortened(_protect_quoted(strip_heredocs(command).replace("\\\n", " ")))
    lexer = shlex.shlex(text, posix=True, punctuation_chars=_PUNCTUATION)
    lexer.whitespace = " \t\r"
    lexer.whitespace_split = True
    lexer.commenters = ""  # comments are removed by _protect_quoted: `a#b` is one word
    try:
        return list(lexer)
    except ValueError:  # unbalanced quotes: no guess is better than a wrong file
        return None


def _shortened(text: str) -> str:
    """`text` with words and operator runs too long to be a path or an operator replaced
    (quoted blanks and punctuation are protected by now, so a word is one run here)."""
    text = _WORD.sub(lambda m: LONG_WORD if len(m.group()) > MAX_WORD_CHARS else m.group(), text)
    return _OPERATOR.sub(lambda m: ";" if len(m.group()) > MAX_OPERATOR_CHARS else m.group(), text)


def _protect_quoted(text: str) -> str:
    out: list[str] = []
    quote = ""
    escaped = False
    comment = False
    for char in text:
        if comment:
            if char != "\n":
                continue
            comment = False
        if escaped:
            escaped = False
        elif char == "\\" and quote != "'":
            escaped = True
        elif quote and char == quote:
            quote = ""
        elif not quote and char in "'\"":
            quote = char
        elif quote and char in _PROTECT:
            # Blanks too: a quoted run is then one word for `_shortened`, so an unclosed quote
            # over a long text becomes LONG_WORD instead of one token shlex builds char by char.
            char = _PROTECT[char]
        elif not quote and char == "#" and (not out or out[-1] in " \t\n;&|("):
            comment = True
            continue
        out.append(char)
    return "".join(out)


def shell_files(command: str) -> tuple[tuple[str, FileStatus], ...]:
    """Files `command` reads or writes: redirection targets, then per-program file arguments."""
    words = _raw_tokens(command)
    if words is None:
        return ()
    found: list[tuple[str, FileStatus]] = []
    for segment in _segments(words):
        found += _segment_files(segment)
    return tuple(dict.fromkeys(found))


def _segments(words: list[str]) -> Iterator[list[tuple[str, str]]]:
    """Simple commands as (kind, word) pairs: kind is "word" or a redirection operator."""
    segment: list[tuple[str, str]] = []
    index = 0
    while index < len(words):
        word = words[index]
        if word and all(c in _PUNCTUATION for c in word) and ("<" in word or ">" in word):
            target = words[index + 1] if index + 1 < len(words) else ""
            if segment and segment[-1][1].isdigit():
                segment.pop()  # `2>file`: the 2 is the descriptor, not an argument
            segment.append((word, target.translate(_UNPROTECT)))
            index += 2
            continue
        if word and all(c in _PUNCTUATION for c in word):
            if segment:
                yield segment
            segment = []
        else:
            segment.append(("word", word.translate(_UNPROTECT)))
        index += 1
    if segment:
        yield segment


def _segment_files(segment: list[tuple[str, str]]) -> list[tuple[str, FileStatus]]:
    found: list[tuple[str, FileStatus]] = []
    words: list[str] = []
    for kind, word in segment:
        if kind == "word":
            words.append(word)
            continue
        if "<<" in kind or word in NOT_FILES or word.isdigit() or not is_path_like(word):
            continue  # heredoc delimiter, descriptor duplication (`>&2`), or not a path
        if ">" in kind:
            found.append((word, "modified" if ">>" in kind else "written"))
        else:
            found.append((word, "read"))
    while words and (_ASSIGNMENT.match(words[0]) or words[0] in _WRAPPERS):
        words.pop(0)
    return found + _program_files(words)


def _program_files(words: list[str]) -> list[tuple[str, FileStatus]]:
    if not words:
        return []
    program = words[0].rsplit("/", 1)[-1]
    flags = [w for w in words[1:] if w.startswith("-")]
    paths = [w for w in words[1:] if not w.startswith("-") and is_path_like(w)]
    paths = [p for p in paths if p not in NOT_FILES]
    if program in READERS:
        return [(p, "read") for p in paths]
    if program == "sed" and any(f.startswith("-i") for f in flags) and paths:
        return [(paths[-1], "modified")]
    if program == "tee":
        return [(p, "modified" if "-a" in flags else "written") for p in paths]
    if program == "open" and paths:  # SWE-agent's editor (`open path [line]`)
        return [(paths[0], "read")]
    if program in {"touch", "create"}:  # `create` is SWE-agent's editor
        return [(p, "created") for p in paths]
    if program == "rm":
        return [(p, "modified") for p in paths]
    if program in {"cp", "mv"} and len(paths) >= 2:
        moved = [(paths[0], "modified")] if program == "mv" else []
        return [*moved, (paths[-1], "written")]
    return []
