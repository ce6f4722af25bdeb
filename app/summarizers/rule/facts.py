"""The fact store behind the rule summary: typed items, keyed for dedupe, newest wins.

`order` is recency: facts parsed from a previous summary get negative orders (older than
anything in the new messages), facts from the new messages count up from 0.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, replace
from typing import Literal

Kind = Literal[
    "task", "focus", "request", "constraint", "decision", "file", "command", "error",
    "question", "context", "workdir",
]  # fmt: skip
PINNED: tuple[Kind, ...] = ("task", "focus", "workdir")

MAX_ITEM_CHARS = 300

# Value of one item when the summary must shrink: open errors and what the user demanded
# matter most to the next turn; files merely read and passing commands are cheap to redo.
WEIGHTS: dict[str, float] = {
    "error:open": 10,
    # As binding as an open error (9 before: at a tight budget, cheaper bare paths then
    # outranked a user constraint).
    "constraint": 10,
    # A harness's standing instructions ("only one command at a time"): binding, but the
    # agent's own prompt says them again each turn; the user's own words come first. (4 cost
    # a 7k-token SWE-agent CTF run two of its 18 commands at 20×.)
    "constraint:standing": 3,
    "decision": 8,
    "file:modified": 7,
    "file:created": 7,
    "question": 6,
    "error:resolved": 5,
    "request": 5,
    "context": 4,
    "command:failed": 3,
    # What was run and read: cheap to redo, but it saves redoing it. Equal, so the shorter
    # line and the more recent one win (measured on real transcripts at 100×: 1.5 for
    # commands and 1 for reads kept fewer of either than one line per tool call).
    "command:ok": 2,
    "file:read": 2,
    # A continued session's carried-over summary: long narrative about the same work, whose
    # facts the transcript mostly still holds; it only fills what is left.
    "context:carried": 1.2,
}
# Recency scales a weight between ×0.5 (oldest item) and ×1 (newest).
RECENCY_FLOOR = 0.5
_FILE_RANK = {"read": 0, "written": 1, "modified": 2, "created": 3}


@dataclass(frozen=True, slots=True)
class Item:
    kind: Kind
    text: str  # quoted exactly: path, command, error line, or the sentence
    order: int
    status: str = ""  # file: read/created/modified; command: exit N/ok; error: open/resolved
    detail: str = ""  # file: tools that touched it; error: the command or call that failed
    resolution: str = ""  # resolved error: what fixed it

    @property
    def key(self) -> tuple[str, str]:
        if self.kind in PINNED:
            return (self.kind, "")
        if self.kind in ("file", "command", "error"):
            return (self.kind, self.text)
        return (self.kind, normalize(self.text))

    @property
    def weight_class(self) -> str:
        if self.kind == "file":
            return f"file:{self.status}"
        if self.kind == "error":
            return f"error:{self.status}"
        if self.kind == "command":
            return "command:ok" if self.status in ("ok", "exit 0") else "command:failed"
        if self.kind == "context" and self.status == "carried":
            return "context:carried"
        if self.kind == "constraint" and self.status == "standing":
            return "constraint:standing"
        return self.kind


def normalize(text: str) -> str:
    return re.sub(r"[\W_]+", " ", text.lower()).strip()


def clip(text: str, limit: int = MAX_ITEM_CHARS) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[:limit].rstrip() + " …"


class Facts:
    """Items keyed by (kind, key); `add` merges with newest-wins rules per kind."""

    def __init__(self) -> None:
        self._items: dict[tuple[str, str], Item] = {}
        # Open errors by the command/call that failed, so a success resolves them in O(1).
        self._open_errors: dict[str, set[tuple[str, str]]] = {}

    def __iter__(self) -> Iterator[Item]:
        return iter(sorted(self._items.values(), key=lambda i: (i.order, i.kind, i.text)))

    def items(self) -> list[Item]:
        return list(self)

    def get(self, kind: Kind, text: str = "") -> Item | None:
        probe = Item(kind, text, 0)
        return self._items.get(probe.key)

    def open_error_sources(self) -> list[str]:
        """The commands and calls that have open errors (what a later success may resolve)."""
        return [source for source, keys in self._open_errors.items() if keys]

    def open_errors(self, source: str) -> list[Item]:
        keys = self._open_errors.get(source, set())
        return sorted((self._items[k] for k in keys), key=lambda i: (i.order, i.text))

    def remove(self, item: Item) -> None:
        old = self._items.pop(item.key, None)
        if old is not None and old.kind == "error":
            self._open_errors.get(old.detail, set()).discard(old.key)

    def add(self, item: Item) -> None:
        old = self._items.get(item.key)
        if old is not None:
            item = _merge(old, item)
        elif item.kind == "file" and item.status == "written":
            item = replace(item, status="created")  # first sight of the file: it is new
        if old is not None and old.kind == "error":
            self._open_errors.get(old.detail, set()).discard(old.key)
        if item.kind == "error" and item.status == "open":
            self._open_errors.setdefault(item.detail, set()).add(item.key)
        self._items[item.key] = item


def _merge(old: Item, new: Item) -> Item:
    if new.kind == "file":
        return replace(new, status=_file_status(old.status, new.status), detail=_tools(old, new))
    if new.kind == "error" and old.status == "resolved" and new.status == "open":
        return new  # it came back
    if new.kind == "task":
        return old  # the task is the first request, not the latest
    if new.kind == "context" or new.kind == "question":
        return replace(old, order=max(old.order, new.order))
    return new


def _file_status(old: str, new: str) -> str:
    """A file written after it was known is modified; created stays created; reads never demote."""
    if new == "written":
        return "created" if old == "created" else "modified"
    return old if _FILE_RANK.get(old, 0) >= _FILE_RANK.get(new, 0) else new


def _tools(old: Item, new: Item) -> str:
    names = [t.strip() for t in f"{old.detail}, {new.detail}".split(",") if t.strip()]
    return ", ".join(dict.fromkeys(names))
