"""Read a previous summary back into facts, so a fold merges instead of appending.

Our own rendered format parses back item by item. Anything else — a free-form summary written
by the LLM, or lines under headings we do not know — becomes "Earlier context" items, one per
line (markdown bullets and numbering stripped), so nothing the reader had is silently lost.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import replace
from math import ceil

from app.summarizers.rule.facts import Facts, Item, Kind, clip
from app.summarizers.rule.paths import absolute
from app.summarizers.rule.render import CUT_MARKER, SECTIONS, WORKDIR_PREFIX

# A tight summary writes commands and paths bare where they read back unambiguously
# (quoting.py): each pattern takes the quoted form or the bare one.
_FILE = re.compile(r"^- (?:`(.+)`(?: \((.*)\))?|([^\s,`]+))$")
# A compact line: the files of one directory, `- dir/: a.py, `b.py` (Edit)`.
_FOLDER = re.compile(r"^- (?:`([^`]*)/`|([^\s,`]*)/): (.+)$")
_ENTRY = re.compile(r"`([^`]+)`(?: \(([^)]*)\))?|([^\s,`]+)")
_COMMAND = re.compile(r"^- (?:`(.+)`|(.+?))(?: → (.+))?$")  # no status: it passed
_ERROR = re.compile(r"^- `(.+)` \(from `(.*)`\)(?: → resolved: (.*))?$")
_QUESTION = re.compile(r"^- (user|assistant): (.+)$")
_BULLET = re.compile(r"^\s*(?:[-*•]|\d+[.)])\s+")
_HEADING = re.compile(r"^\s*(?:#+\s*.*|\*\*[^*]+\*\*:?|[A-Z][\w &/()-]{0,40}:)\s*$")
_KINDS: dict[str, tuple[Kind, str]] = {
    "User requests:": ("request", ""),
    "User constraints:": ("constraint", ""),
    "Decisions:": ("decision", ""),
    "Files modified:": ("file", "modified"),
    "Files created:": ("file", "created"),
    "Files read:": ("file", "read"),
    "Commands:": ("command", ""),
    "Errors (open):": ("error", "open"),
    "Errors (resolved):": ("error", "resolved"),
    "Open questions:": ("question", ""),
    "Earlier context:": ("context", ""),
    "Earlier summary:": ("context", "carried"),
}
assert set(_KINDS) == {header for header, _ in SECTIONS}


def parse_summary(text: str | None) -> Facts:
    facts = Facts()
    if not text:
        return facts
    lines = [line.rstrip() for line in text.splitlines() if line.strip()]
    section: tuple[Kind, str] | None = None
    workdir = next((x[len(WORKDIR_PREFIX) :] for x in lines if x.startswith(WORKDIR_PREFIX)), None)
    orders = _orders(lines)
    for index, line in enumerate(lines):
        order = orders[index]
        if line.startswith("Task: "):
            facts.add(Item("task", line[len("Task: ") :], order))
        elif line.startswith(WORKDIR_PREFIX):
            facts.add(Item("workdir", line[len(WORKDIR_PREFIX) :], order))
        elif line.startswith("Current focus: "):
            facts.add(Item("focus", line[len("Current focus: ") :], order))  # newer focus wins
        elif line in _KINDS:
            section = _KINDS[line]
        elif section is not None and section[0] == "file" and (folder := _FOLDER.match(line)):
            directory = folder.group(1) if folder.group(1) is not None else folder.group(2)
            for entry in _ENTRY.finditer(folder.group(3)):
                path = absolute(f"{directory}/{entry.group(1) or entry.group(3)}", workdir)
                facts.add(Item("file", path, order, section[1], detail=entry.group(2) or ""))
        elif section is not None and line.startswith("- "):
            facts.add(_item(section, line, order, workdir))
        elif _HEADING.match(line) and len(line) < 60:
            section = None  # a heading we do not know: its bullets become context
        else:
            section = None if not line.startswith("- ") else section
            facts.add(Item("context", clip(_BULLET.sub("", line.strip()).strip("* ")), order))
    _whole_sources(facts)
    return facts


def _whole_sources(facts: Facts) -> None:
    """An error of a tight summary names its command by its head (`pytest tests/a …`): when
    exactly one listed command starts with that head, it is the error's command again, so a
    later success of that command resolves it (an ambiguous head resolves nothing)."""
    commands = {i.text for i in facts if i.kind == "command"}
    for item in facts.items():
        if item.kind != "error" or not item.detail.endswith(CUT_MARKER):
            continue
        head = item.detail[: -len(CUT_MARKER)]
        whole = [command for command in commands if command.startswith(head)]
        if len(whole) == 1:
            facts.remove(item)
            facts.add(replace(item, detail=whole[0]))


def _orders(lines: list[str]) -> list[int]:
    """Each line's order: older than anything new (negative), oldest first within a section.

    Sections are rendered one after another, so reading order would make every line of the
    last sections look newer than all of the first ones, and a fold would evict files read
    (listed early) before resolved errors (listed late). Instead each section's lines are
    spread over the same span: a section's newest line gets -1, whatever section it is in.
    """
    span = len(lines) + 1
    groups: list[str] = []
    group = ""
    for line in lines:
        if line in _KINDS:
            group = line
        elif not line.startswith("- "):
            group = ""  # task, focus, context: reading order
        groups.append(group)
    sizes = Counter(groups)
    seen: Counter[str] = Counter()
    orders = []
    for index, group in enumerate(groups):
        seen[group] += 1
        if group:
            orders.append(-span + ceil(seen[group] * (span - 1) / sizes[group]))
        else:
            orders.append(index - span)
    return orders


def _item(section: tuple[Kind, str], line: str, order: int, workdir: str | None) -> Item:
    kind, status = section
    if kind == "file" and (match := _FILE.match(line)):
        path = absolute(match.group(1) or match.group(3), workdir)
        return Item("file", path, order, status, detail=match.group(2) or "")
    if kind == "command" and (match := _COMMAND.match(line)):
        return Item("command", match.group(1) or match.group(2), order, match.group(3) or "ok")
    if kind == "error" and (match := _ERROR.match(line)):
        resolution = match.group(3) or ""
        state = "resolved" if resolution or status == "resolved" else "open"
        return Item("error", match.group(1), order, state, match.group(2), resolution)
    if kind == "question" and (match := _QUESTION.match(line)):
        return Item("question", match.group(2), order, match.group(1))
    if kind in ("request", "constraint", "decision", "context"):
        return Item(kind, line[2:], order, status)
    return Item("context", clip(line[2:]), order)
