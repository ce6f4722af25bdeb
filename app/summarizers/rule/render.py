"""Render facts as compact sectioned text, evicting the lowest-value items to fit a token budget.

Value = kind weight × recency (see `facts.WEIGHTS`) per token, diminishing within a section;
each section's best items up to a floor come first, so no kind of fact is starved by a heavier
one. The largest set of top-ranked items whose rendering fits is found by binary search over
the ranking (rendered size grows with every item added), so fitting costs O(log n) full token
counts. Task and current focus are pinned; if even
they do not fit, they are cut with a marker, and the final text is hard-capped at the budget.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import replace

from app.core.deadline import check_deadline
from app.engine.truncate import truncate_text
from app.summarizers.rule.facts import PINNED, RECENCY_FLOOR, WEIGHTS, Item, normalize
from app.summarizers.rule.outcomes import ERROR_PARTS
from app.summarizers.rule.paths import relative
from app.summarizers.rule.quoting import STATUS_MARK, quote_command, quote_path
from app.tokens.base import TokenCounter

CUT_MARKER = " …"
# Task and focus may take at most half of a tight budget (the task is also pinned verbatim by
# the context assembler); past that they are cut to these shares and facts fill the rest.
PINNED_SHARE = 0.5
SHARES = {"task": 0.3, "focus": 0.15}
# How much an item's length counts against its value (0: not at all, 1: value per token).
COST_EXPONENT = 0.5
# Diminishing returns within a section: an item is worth DECAY ** (k / n) of its own value when
# k of its section's n items rank above it, so a section's last item is worth under a third of
# its first.
# At a tight budget every section keeps a share of its items (twenty user corrections cannot
# starve the commands and files read), while weights still decide which section goes deeper.
DECAY = 0.3
# A floor per section when not everything fits: this share of the room left after the task and
# focus is split evenly between the sections that have items, and each section's best items
# that fit in its part are kept first. Diminishing returns alone cannot lift a section whose
# items all weigh less than another's last (commands at 2, user constraints at 10).
FLOOR_SHARE = 0.4
# A continued session's carried-over summary only fills what is left: no floor.
NO_FLOOR = ("context:carried",)
# Filling the budget left is estimated per line, then checked exactly: at most this many rounds.
FILL_ROUNDS = 8
SENTENCE_KINDS = ("request", "constraint", "decision", "question")
# When items are still evicted at a tight budget, commands and sentences are cut to their head
# (with CUT_MARKER): the head identifies them, and two heads tell more than one whole item.
HEADLINE_TOKENS = 24
# At a tight budget an error is quoted by those of its informative lines that fit in this many
# tokens, in error_lines' order (what went wrong, where, the tally…), and the command it came from
# (listed in full under Commands) by its head.
ERROR_HEAD_TOKENS = 20
SOURCE_HEAD_TOKENS = 6
HEADLINED = ("command", "request", "constraint", "decision", "question", "context")

SECTIONS: list[tuple[str, Callable[[Item], bool]]] = [
    ("User requests:", lambda i: i.kind == "request"),
    ("User constraints:", lambda i: i.kind == "constraint"),
    ("Decisions:", lambda i: i.kind == "decision"),
    ("Files modified:", lambda i: i.kind == "file" and i.status == "modified"),
    ("Files created:", lambda i: i.kind == "file" and i.status == "created"),
    ("Files read:", lambda i: i.kind == "file" and i.status not in ("modified", "created")),
    ("Commands:", lambda i: i.kind == "command"),
    ("Errors (open):", lambda i: i.kind == "error" and i.status != "resolved"),
    ("Errors (resolved):", lambda i: i.kind == "error" and i.status == "resolved"),
    ("Open questions:", lambda i: i.kind == "question"),
    ("Earlier context:", lambda i: i.kind == "context" and i.status != "carried"),
    # A continued session's carried-over summary keeps its low value across folds.
    ("Earlier summary:", lambda i: i.kind == "context" and i.status == "carried"),
]


WORKDIR_PREFIX = "Working directory: "
PASSED = ("", "ok", "exit 0")  # a command's statuses that are not marked


def item_line(item: Item, workdir: str | None = None, compact: bool = False) -> str:
    """One summary line; file paths under `workdir` are written relative to it. `compact` (a
    tight budget) writes commands and paths bare where they read back unambiguously."""
    if item.kind == "file":
        return "- " + file_entry(item, relative(item.text, workdir), compact)
    if item.kind == "command":
        # Only a failure is marked: a listed command without one ran (or its result is unknown).
        text = quote_command(item.text, compact)
        return f"- {text}{STATUS_MARK}{item.status}" if item.status not in PASSED else f"- {text}"
    if item.kind == "error":
        line = f"- `{item.text}` (from `{item.detail}`)"
        if item.status != "resolved":
            return line
        return f"{line} → resolved: {_under(item.resolution, workdir)}"
    if item.kind == "question":
        return f"- {item.status or 'user'}: {item.text}"
    return f"- {item.text}"


def render(items: Sequence[Item], compact: bool = False) -> str:
    """The summary text of `items`. `compact` (at a tight budget) lists the files of one
    section that share a directory on one line (`- dir/: a.py, b.py`), commands and paths
    bare where they read back unambiguously (quoting.py)."""
    ordered = sorted(items, key=lambda i: (i.order, i.text))
    lines: list[str] = [f"Task: {i.text}" for i in ordered if i.kind == "task"][:1]
    workdir = _workdir(ordered)
    if workdir:
        lines.append(WORKDIR_PREFIX + workdir)
    for header, belongs in SECTIONS:
        members = [i for i in ordered if belongs(i)]
        if not members:
            continue
        lines.append(header)
        if compact and members[0].kind == "file":
            lines += _file_lines(members, workdir)
        else:
            lines += [item_line(i, workdir, compact) for i in members]
    focus = [i.text for i in ordered if i.kind == "focus"][-1:]
    lines += [f"Current focus: {_under(text, workdir)}" for text in focus]
    return "\n".join(lines)


def _under(text: str, workdir: str | None) -> str:
    """`text` with the quoted paths under `workdir` written relative to it."""
    return text.replace(f"`{workdir}/", "`") if workdir else text


def _workdir(items: Sequence[Item]) -> str | None:
    """The working directory the rendering names: only when some file lies under it."""
    workdir = next((i.text for i in items if i.kind == "workdir"), None)
    if workdir and any(relative(i.text, workdir) != i.text for i in items if i.kind == "file"):
        return workdir
    return None


def _file_lines(files: Sequence[Item], workdir: str | None) -> list[str]:
    """One line per directory holding two or more of `files` (in order of its first file),
    one line per file otherwise."""
    folders: dict[str, list[Item]] = {}
    for item in files:
        folders.setdefault(_folder(relative(item.text, workdir)), []).append(item)
    lines = []
    for folder, members in folders.items():
        if folder and len(members) > 1:
            names = ", ".join(file_entry(i, i.text.rsplit("/", 1)[-1], True) for i in members)
            lines.append(f"- {quote_path(folder + '/', True)}: {names}")
        else:
            lines += [item_line(i, workdir, True) for i in members]
    return lines


def _folder(path: str) -> str:
    return path.rsplit("/", 1)[0] if "/" in path.strip("/") else ""


def file_entry(item: Item, path: str, compact: bool = False) -> str:
    """`path` quoted, with the tools that changed it (which tools merely read a file is not
    worth its tokens)."""
    detail = item.detail if item.status in ("modified", "created") else ""
    return f"`{path}` ({detail})" if detail else quote_path(path, compact)


def rank(
    items: Sequence[Item], counter: TokenCounter | None = None, compact: bool = False
) -> list[Item]:
    """Most valuable first; deterministic (ties broken by recency, then text).

    With a counter, value is per token spent: weight × recency / line tokens ** COST_EXPONENT,
    so three short paths can beat one long command of the same weight (`compact`: a file's
    tokens on its directory's line, see `line_costs`). Within each section the
    value then diminishes with rank (DECAY), so no section is starved by a heavier one.
    """
    orders = sorted({i.order for i in items})
    position = {o: n for n, o in enumerate(orders)}
    span = max(len(orders) - 1, 1)
    costs = line_costs(items, counter, compact) if counter is not None else {}

    def score(item: Item) -> float:
        recency = RECENCY_FLOOR + (1 - RECENCY_FLOOR) * position[item.order] / span
        value = WEIGHTS.get(item.weight_class, 1.0) * recency
        if counter is None:
            return value
        return float(value / max(costs[id(item)], 1) ** COST_EXPONENT)

    scores = {id(i): score(i) for i in items}
    sections: dict[str, list[Item]] = {}
    for item in items:
        sections.setdefault(_section(item), []).append(item)
    for members in sections.values():
        members.sort(key=lambda i: (-scores[id(i)], -i.order, i.kind, i.text))
        for k, item in enumerate(members):
            scores[id(item)] *= DECAY ** (k / len(members))
    return sorted(items, key=lambda i: (-scores[id(i)], -i.order, i.kind, i.text))


def line_costs(
    items: Sequence[Item], counter: TokenCounter, compact: bool = False
) -> dict[int, int]:
    """Tokens each item adds to the rendering (by `id`), its section header aside: its line,
    or, `compact`, for a file whose directory holds another file of its section, its name
    on the directory's line."""
    workdir = _workdir(items)
    folders: Counter[tuple[str, str]] = Counter()
    if compact:
        for item in items:
            if item.kind == "file":
                folders[(_section(item), _folder(relative(item.text, workdir)))] += 1
    costs = {}
    for item in items:
        where = (_section(item), _folder(relative(item.text, workdir)))
        if item.kind == "file" and where[1] and folders[where] > 1:
            name = item.text.rsplit("/", 1)[-1]
            costs[id(item)] = counter.count_text(file_entry(item, name, compact) + ", ")
        else:
            costs[id(item)] = counter.count_text(item_line(item, workdir, compact)) + 1
    return costs


def fit(items: Sequence[Item], budget: int, counter: TokenCounter) -> str:
    """The rendering of the most valuable items that fits in `budget` tokens.

    The top of the ranking that fits is found by binary search; then the budget left is filled
    with lower-ranked items that still fit (a long item must not keep shorter ones out).
    """
    pinned = [i for i in items if i.kind in PINNED]
    ranked = rank([i for i in items if i.kind not in PINNED], counter)
    full = render([*pinned, *ranked])
    if counter.count_text(full) <= budget:
        return full
    if ranked and counter.count_text(render(pinned)) > budget * PINNED_SHARE:
        # A long task and focus would leave no room for the facts: cut them to their shares.
        pinned = [_shrunk(i, int(budget * SHARES.get(i.kind, 1.0)), counter) for i in pinned]
    # Tight: say nothing twice, errors by the head of their first informative line, files
    # without the tools that changed them and, sharing a directory, on one line (ranked again
    # at what each item costs there), and every section a floor.
    said = _not_pinned(ranked, pinned)
    forms = [_tight(i, counter) for i in said]
    # The budget left after packing gives errors back their location, comparison and test ids.
    whole = {
        id(form): replace(item, detail=form.detail)  # the command stays named by its head
        for form, item in zip(forms, said, strict=True)
        if item.kind == "error"
    }
    ranked = rank([*_distinct(forms), *pinned], counter, compact=True)
    ranked = [i for i in ranked if i.kind not in PINNED]
    kept = _pack(pinned, ranked, budget, counter)
    if len(kept) < len(pinned) + len(ranked):
        # Still evicting: long items cut to their heads let more items in; the budget that is
        # left then gives heads back their whole text, best-ranked first.
        heads = [_headline(i, counter) for i in ranked]
        whole |= {id(h): whole.get(id(i), i) for h, i in zip(heads, ranked, strict=True)}
        kept = _pack(pinned, heads, budget, counter)
    kept = _restore(kept, whole, budget, counter)
    text = _compact(kept)
    if len(kept) == len(pinned) and counter.count_text(text) > budget:
        share = max(budget // max(len(pinned), 1) - 4, 1)
        text = _compact(
            [_shrunk(i, share, counter) for i in pinned]  # task and focus split the budget
        )
    return truncate_to_tokens(text, budget, counter)


def _compact(items: Sequence[Item]) -> str:
    return render(items, compact=True)


def _not_pinned(ranked: list[Item], pinned: Sequence[Item]) -> list[Item]:
    """`ranked` without the sentences the task or focus line already says word for word."""
    said = " ".join(f" {normalize(i.text)} " for i in pinned)
    return [
        i for i in ranked if i.kind not in SENTENCE_KINDS or f" {normalize(i.text)} " not in said
    ]


def _tight(item: Item, counter: TokenCounter) -> Item:
    """The item's short form for a tight budget: an error as the head of its message and
    location (the rest, test ids and the tally, comes back when the budget allows) and the
    head of the command it came from, a file without its tools."""
    if item.kind == "error":
        parts = item.text.split(ERROR_PARTS)
        text = parts[0]
        for part in parts[1:]:
            if counter.count_text(text + ERROR_PARTS + part) <= ERROR_HEAD_TOKENS:
                text += ERROR_PARTS + part
        text = _head(text + (CUT_MARKER if text != item.text else ""), ERROR_HEAD_TOKENS, counter)
        return replace(item, text=text, detail=_head(item.detail, SOURCE_HEAD_TOKENS, counter))
    if item.kind == "file" and item.detail:
        return replace(item, detail="")
    return item


def _head(text: str, tokens: int, counter: TokenCounter) -> str:
    """`text` cut to `tokens` (ending CUT_MARKER), unchanged when it fits or is already cut."""
    if counter.count_text(text) <= tokens:
        return text
    base = text[: -len(CUT_MARKER)] if text.endswith(CUT_MARKER) else text
    return truncate_to_tokens(base, tokens, counter)


def _distinct(items: list[Item]) -> list[Item]:
    """`items` without the ones whose line says what a better-ranked line already says."""
    seen: set[tuple[str, str]] = set()
    kept = []
    for item in items:
        line = (_section(item), item_line(item))
        if line not in seen:
            seen.add(line)
            kept.append(item)
    return kept


def _headline(item: Item, counter: TokenCounter) -> Item:
    """A command or sentence cut to its first HEADLINE_TOKENS (the same item otherwise)."""
    return _shrunk(item, HEADLINE_TOKENS, counter) if item.kind in HEADLINED else item


def _pack(pinned: list[Item], ranked: list[Item], budget: int, counter: TokenCounter) -> list[Item]:
    """`pinned` plus the most valuable of `ranked` that fit: section floors first, then the
    longest fitting prefix of the ranking, then whatever else still fits."""
    costs = line_costs([*pinned, *ranked], counter, compact=True)
    ranked = _floors_first(ranked, budget - counter.count_text(_compact(pinned)), costs)
    low = _fitting_prefix(pinned, ranked, budget, counter)
    return _fill([*pinned, *ranked[:low]], ranked[low:], budget, counter, costs)


def _restore(
    kept: list[Item], whole: dict[int, Item], budget: int, counter: TokenCounter
) -> list[Item]:
    """`kept` with cut items given back their whole text, in order, while the budget allows
    (estimated per line, then checked exactly and trimmed to a fitting prefix of the swaps)."""
    used = counter.count_text(_compact(kept))
    swaps: list[int] = []
    for n, item in enumerate(kept):
        original = whole.get(id(item))
        if original is None or original is item:
            continue
        extra = counter.count_text(item_line(original)) - counter.count_text(item_line(item))
        if used + extra <= budget:
            swaps.append(n)
            used += extra

    def swapped(count: int) -> list[Item]:
        chosen = set(swaps[:count])
        return [whole[id(i)] if n in chosen else i for n, i in enumerate(kept)]

    low, high = 0, len(swaps)
    while low < high:
        check_deadline()
        middle = (low + high + 1) // 2
        if counter.count_text(_compact(swapped(middle))) <= budget:
            low = middle
        else:
            high = middle - 1
    return swapped(low)


def _floors_first(ranked: list[Item], room: int, costs: dict[int, int]) -> list[Item]:
    """`ranked` with each section's floor moved to the front (rank order kept otherwise).

    FLOOR_SHARE of the room left for facts is split evenly between the sections that have
    items; a section's floor is its best-ranked items whose lines fit in its share.
    """
    sections: dict[str, list[Item]] = {}
    for item in ranked:
        if item.weight_class not in NO_FLOOR:
            sections.setdefault(_section(item), []).append(item)
    if not sections or room <= 0:
        return ranked
    share = room * FLOOR_SHARE / len(sections)
    floor: set[int] = set()
    for members in sections.values():
        used = 0
        for item in members:
            used += costs[id(item)]
            if used > share:
                break
            floor.add(id(item))
    return [i for i in ranked if id(i) in floor] + [i for i in ranked if id(i) not in floor]


def _fill(
    kept: list[Item],
    rest: Sequence[Item],
    budget: int,
    counter: TokenCounter,
    costs: dict[int, int],
) -> list[Item]:
    """`kept` plus, in rank order, every item of `rest` whose line still fits the budget.

    Each candidate costs its line's tokens (`costs`, + a section header when its section is
    new); the sum is an estimate (a file's name on its directory's line costs less than its
    own line, and more when that line is not kept), so the additions are checked exactly,
    trimmed to a fitting prefix (or, when none fits, the first is dropped), and what is left
    is offered again, at most FILL_ROUNDS times.
    """
    for _ in range(FILL_ROUNDS):
        check_deadline()
        used = counter.count_text(_compact(kept))
        sections = {_section(i) for i in kept}
        added: list[Item] = []
        for item in rest:
            cost = costs[id(item)]
            if _section(item) not in sections:
                cost += counter.count_text(_section(item)) + 1
            if used + cost <= budget:
                added.append(item)
                used += cost
                sections.add(_section(item))
        if not added:
            break
        fitting = _fitting_prefix(kept, added, budget, counter)
        kept = [*kept, *added[:fitting]]
        done = {id(i) for i in added[: max(fitting, 1)]}  # an item that did not fit: dropped
        rest = [i for i in rest if id(i) not in done]
    return kept


def _fitting_prefix(
    base: list[Item], extra: Sequence[Item], budget: int, counter: TokenCounter
) -> int:
    """The largest n such that `base` + the first n of `extra` renders within `budget`.

    Binary search: the rendered size grows with every item added, so fitting is monotonic.
    """
    low, high = 0, len(extra)  # invariant: top-`low` fits (or low == 0), top-`high` may not
    while low < high:
        check_deadline()
        middle = (low + high + 1) // 2
        if counter.count_text(_compact([*base, *extra[:middle]])) <= budget:
            low = middle
        else:
            high = middle - 1
    return low


def _section(item: Item) -> str:
    return next((header for header, belongs in SECTIONS if belongs(item)), item.kind)


def _shrunk(item: Item, tokens: int, counter: TokenCounter) -> Item:
    return replace(item, text=truncate_to_tokens(item.text, tokens, counter))


def truncate_to_tokens(text: str, budget: int, counter: TokenCounter) -> str:
    """`text` cut to at most `budget` tokens, ending CUT_MARKER; "" when nothing fits."""
    return truncate_text(text, budget, counter, _ellipsis_cut) or ""


def _ellipsis_cut(text: str, keep: int) -> str:
    return text[:keep].rstrip() + CUT_MARKER if keep else ""
