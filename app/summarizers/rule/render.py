"""Render facts as compact sectioned text, evicting the lowest-value items to fit a token budget.

Value = kind weight × recency (see `facts.WEIGHTS`). The largest set of top-valued items whose
rendering fits is found by binary search over the ranking (rendered size grows with every item
added), so fitting costs O(log n) full token counts. Task and current focus are pinned; if even
they do not fit, they are cut with a marker, and the final text is hard-capped at the budget.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace

from app.summarizers.rule.facts import RECENCY_FLOOR, WEIGHTS, Item
from app.tokens.base import TokenCounter

CUT_MARKER = " …"

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
    ("Earlier context:", lambda i: i.kind == "context"),
]


def item_line(item: Item) -> str:
    if item.kind == "file":
        return f"- `{item.text}` ({item.detail})" if item.detail else f"- `{item.text}`"
    if item.kind == "command":
        return f"- `{item.text}` → {item.status or 'ok'}"
    if item.kind == "error":
        line = f"- `{item.text}` (from `{item.detail}`)"
        return f"{line} → resolved: {item.resolution}" if item.status == "resolved" else line
    if item.kind == "question":
        return f"- {item.status or 'user'}: {item.text}"
    return f"- {item.text}"


def render(items: Sequence[Item]) -> str:
    ordered = sorted(items, key=lambda i: (i.order, i.text))
    lines: list[str] = [f"Task: {i.text}" for i in ordered if i.kind == "task"][:1]
    for header, belongs in SECTIONS:
        section = [item_line(i) for i in ordered if belongs(i)]
        if section:
            lines += [header, *section]
    lines += [f"Current focus: {i.text}" for i in ordered if i.kind == "focus"][-1:]
    return "\n".join(lines)


def rank(items: Sequence[Item]) -> list[Item]:
    """Most valuable first; deterministic (ties broken by recency, then text)."""
    orders = sorted({i.order for i in items})
    position = {o: n for n, o in enumerate(orders)}
    span = max(len(orders) - 1, 1)

    def score(item: Item) -> float:
        recency = RECENCY_FLOOR + (1 - RECENCY_FLOOR) * position[item.order] / span
        return WEIGHTS.get(item.weight_class, 1.0) * recency

    return sorted(items, key=lambda i: (-score(i), -i.order, i.kind, i.text))


def fit(items: Sequence[Item], budget: int, counter: TokenCounter) -> str:
    """The rendering of the most valuable items that fits in `budget` tokens."""
    pinned = [i for i in items if i.kind in ("task", "focus")]
    ranked = rank([i for i in items if i.kind not in ("task", "focus")])
    full = render([*pinned, *ranked])
    if counter.count_text(full) <= budget:
        return full
    low, high = 0, len(ranked)  # invariant: top-`low` fits (or low == 0), top-`high` may not
    while low < high:
        middle = (low + high + 1) // 2
        if counter.count_text(render([*pinned, *ranked[:middle]])) <= budget:
            low = middle
        else:
            high = middle - 1
    text = render([*pinned, *ranked[:low]])
    if low == 0 and counter.count_text(text) > budget:
        share = max(budget // max(len(pinned), 1) - 4, 1)
        text = render(
            [_shrunk(i, share, counter) for i in pinned]  # task and focus split the budget
        )
    return truncate_to_tokens(text, budget, counter)


def _shrunk(item: Item, tokens: int, counter: TokenCounter) -> Item:
    return replace(item, text=truncate_to_tokens(item.text, tokens, counter))


def truncate_to_tokens(text: str, budget: int, counter: TokenCounter) -> str:
    """`text` cut (with a marker) to at most `budget` tokens; binary search over its length."""
    if counter.count_text(text) <= budget:
        return text
    if budget <= 0:
        return ""
    low, high = 0, len(text)
    while low < high:
        middle = (low + high + 1) // 2
        if counter.count_text(text[:middle].rstrip() + CUT_MARKER) <= budget:
            low = middle
        else:
            high = middle - 1
    cut = text[:low].rstrip() + CUT_MARKER
    return cut if low and counter.count_text(cut) <= budget else ""
