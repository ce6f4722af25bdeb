"""Paths: what looks like one, the session's working directory, and paths shortened against it.

Agents such as Claude Code pass absolute paths (`/home/<user>/…/project/lib/x.ex`) on every
call; repeated in full on every summary line they cost tokens that could hold more facts. When
one directory holds most of the files a session touched, the summary names it once
(`Working directory: …`) and lists files relative to it.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable

_PATH_LIKE = re.compile(r"^(?:~|\.{1,2})?/?[\w.\-@+]+(?:/[\w.\-@+]+)*/?$")
_HAS_EXTENSION = re.compile(r"\.[A-Za-z0-9]{1,8}$")
# The working directory must hold at least this share of the absolute paths, and be at least
# two levels deep (`/home/x`), so that `/` or `/tmp` are never chosen.
WORKDIR_SHARE = 0.6
MIN_WORKDIR_DEPTH = 2
NEARLY_ALL = 0.9
MAX_PATH_CHARS = 300  # as is_path_like


def is_path_like(value: str) -> bool:
    if not value or len(value) > MAX_PATH_CHARS or "://" in value or value.startswith("-"):
        return False
    if not _PATH_LIKE.match(value):
        return False
    return "/" in value or bool(_HAS_EXTENSION.search(value))


def infer_workdir(paths: Iterable[str]) -> str | None:
    """Where the session ran: the directory that turns relative paths into known absolute
    ones, else the one most of the absolute `paths` (at least WORKDIR_SHARE) lie under."""
    # A longer "path" (a tool argument) is not a file, and each path costs its depth twice.
    paths = [p for p in paths if len(p) <= MAX_PATH_CHARS]
    absolute = [p.rstrip("/") for p in paths if p.startswith("/")]
    # Best evidence: a relative path (`lib/b.ex`, from a shell command) that is the tail of an
    # absolute one (`/x/shop/lib/b.ex`, from an edit) says where the commands ran (`/x/shop`).
    # Tails are looked up among every absolute path's tails: no pair of paths is compared.
    tails = {p.removeprefix("./") for p in paths if not p.startswith(("/", "~", "$", "../"))}
    by_tail: dict[str, list[str]] = {}
    for path in absolute:
        for slash in _slashes(path):
            by_tail.setdefault(path[slash + 1 :], []).append(path)
    evidence = Counter(path[: -len(tail) - 1] for tail in tails for path in by_tail.get(tail, ()))
    if evidence:
        return min(evidence, key=lambda d: (-evidence[d], d))
    if len(absolute) < 2:
        return None
    counts: Counter[str] = Counter()
    for path in set(absolute):
        parts = path.split("/")[1:-1]
        for depth in range(MIN_WORKDIR_DEPTH, len(parts) + 1):
            counts["/" + "/".join(parts[:depth])] += 1
    distinct = len(set(absolute))
    candidates = [d for d, n in counts.items() if n >= WORKDIR_SHARE * distinct]
    if not candidates:
        return None
    # The deepest directory holding nearly as many files as the best one: the project, not
    # its home directory above it (one stray file outside) nor its busiest subfolder.
    most = max(counts[d] for d in candidates)
    close = [d for d in candidates if counts[d] >= NEARLY_ALL * most]
    return max(close, key=lambda d: (d.count("/"), d))


def _slashes(path: str) -> list[int]:
    return [i for i, char in enumerate(path) if char == "/"]


def relative(path: str, workdir: str | None) -> str:
    """`path` relative to `workdir` when it lies under it, else unchanged."""
    if workdir and path.startswith(workdir + "/") and len(path) > len(workdir) + 1:
        return path[len(workdir) + 1 :]
    return path


def absolute(path: str, workdir: str | None) -> str:
    """The inverse of `relative` for a path read back from a summary."""
    if workdir and not path.startswith(("/", "~", "$")) and "://" not in path:
        return f"{workdir}/{path}"
    return path
