"""What every family of rules shares: a hit, a rule, and the finder made from a pattern."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import NamedTuple


class Hit(NamedTuple):
    start: int
    end: int
    kind: str  # "" from a finder: the kind of its rule


Finder = Callable[[str], Iterator[Hit]]
Accept = Callable[[re.Match[str]], tuple[int, int] | None]
PATTERNS: list[re.Pattern[str]] = []  # every pattern of redaction (tests check their bounds)


@dataclass(frozen=True, slots=True)
class Rule:
    kind: str
    find: Finder
    decodes: bool = False  # decodes its text and searches it again: not run on decoded text


def compiled(pattern: str) -> re.Pattern[str]:
    """`pattern` compiled and registered in `PATTERNS`."""
    result = re.compile(pattern)
    PATTERNS.append(result)
    return result


_WORD = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_")
_HEX = frozenset("0123456789abcdefABCDEF")


def standalone(text: str, start: int) -> bool:
    """Not glued to a word before it (`\\n` and `\\t` escapes count as breaks, and so does a
    URL-encoded character: `%3D`, `%253D`)."""
    if start == 0 or text[start - 1] not in _WORD:
        return True
    if start >= 2 and text[start - 2] == "\\" and text[start - 1] in "nrt":
        return True
    if start < 3 or not _HEX.issuperset(text[start - 2 : start]):
        return False
    return text[start - 3] == "%" or text[max(0, start - 5) : start - 2] == "%25"


def regex(pattern: str, accept: Accept | None = None, *, alone: bool = True) -> Finder:
    """A finder from a pattern: the span of group `s` (or the whole match), when `accept`
    (given the match) agrees. `alone`: the match must not continue a word before it.
    Its hits carry no kind: the rule's is used."""
    matcher = compiled(pattern)
    group = "s" if "s" in matcher.groupindex else 0

    def find(text: str) -> Iterator[Hit]:
        for match in matcher.finditer(text):
            if alone and not standalone(text, match.start()):
                continue
            span = accept(match) if accept else match.span(group)
            if span is not None and span[0] < span[1]:
                yield Hit(span[0], span[1], "")

    return find
