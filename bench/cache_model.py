"""The provider's prompt cache, modelled for bench/cache.py, and the numbers kept per side.

A request is a list of cacheable elements: [the tools, each system text block, each message]
(markers left out, string contents as one text block). It reads from the cache the longest
prefix of whole elements that ends where an earlier request of the session had a
`cache_control` breakpoint, and stores the prefixes ending at its own breakpoints. Foldwise's
side has the breakpoints the service placed; LangChain's side those a careful client places
(the end of the system prompt, the newest message). This is Anthropic's rule with breakpoints
at element ends, leaving out the cache lifetime, the look-back limit of ~20 blocks per
breakpoint and the minimum cacheable length (1,024 tokens: the small setup's system prompt
alone is under it, so `small` flatters whichever side keeps only that prefix).

Cost: uncached input tokens are written to the cache at 1.25× the input price, cached ones
read at 0.1×.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from app.engine.prompt_cache import unmarked
from tests.support.markers import count_markers

CACHE_WRITE, CACHE_READ = 1.25, 0.10


@dataclass(frozen=True)
class Request:
    """The cacheable elements of one request as canonical text, and which end a breakpoint."""

    elements: list[str]
    marked: list[bool]


def as_request(
    tools: list[dict[str, Any]] | None, system: Any, messages: Sequence[dict[str, Any]]
) -> Request:
    """String content is the API's shorthand for one text block: the same input to its cache;
    a string system is one block."""
    blocks = system if isinstance(system, list) else [{"type": "text", "text": system}]
    blocks = [b for b in blocks if b.get("text")]
    contents = [m.get("content") for m in messages]
    parts: list[Any] = ([tools] if tools else []) + blocks + list(messages)
    elements = []
    for part in map(unmarked, parts):
        if isinstance(part, dict) and isinstance(content := part.get("content"), str):
            part = {**part, "content": [{"type": "text", "text": content}]}
        elements.append(json.dumps(part, sort_keys=True))
    marked = [bool(tools and count_markers(tools))] if tools else []
    marked += [count_markers(b) > 0 for b in blocks] + [count_markers(c) > 0 for c in contents]
    return Request(elements, marked)


def _prefixes(elements: list[str]) -> list[str]:
    digest, out = hashlib.sha256(), []
    for element in elements:
        digest.update(hashlib.sha256(element.encode()).digest())
        out.append(digest.hexdigest())
    return out


class PromptCache:
    """The prefixes stored at breakpoints across a session's requests."""

    def __init__(self) -> None:
        self.stored: set[str] = set()

    def read(self, request: Request) -> tuple[list[str], int]:
        """The request's prefixes and how many of its elements it reads from the cache; its
        own breakpoints are stored for the requests after it."""
        prefixes = _prefixes(request.elements)
        read = max((i + 1 for i, p in enumerate(prefixes) if p in self.stored), default=0)
        self.stored.update(p for p, mark in zip(prefixes, request.marked, strict=True) if mark)
        return prefixes, read

    def bill(self, request: Request, count: Callable[[str], int]) -> tuple[int, int, int]:
        """(cache read, cache write, full-price) input tokens of `request`: the elements up to
        its last breakpoint that were not read are written."""
        _, read = self.read(request)
        last = max((i + 1 for i, mark in enumerate(request.marked) if mark), default=0)
        tokens = [count(element) for element in request.elements]
        return sum(tokens[:read]), sum(tokens[read:last]), sum(tokens[max(read, last) :])


class AutomaticCache:
    """OpenAI's automatic prompt caching: a request reads the longest prefix of whole elements
    an earlier request sent, once it reaches 1,024 tokens, in steps of 128 beyond that; every
    request is cached, with no write surcharge."""

    MIN_TOKENS, STEP = 1024, 128

    def __init__(self) -> None:
        self.stored: set[str] = set()

    def bill(self, elements: list[str], count: Callable[[str], int]) -> tuple[int, int]:
        """(uncached, cached) input tokens of a request of `elements`."""
        prefixes = _prefixes(elements)
        read = max((i + 1 for i, p in enumerate(prefixes) if p in self.stored), default=0)
        self.stored.update(prefixes)
        tokens = [count(element) for element in elements]
        cached = sum(tokens[:read])
        if cached < self.MIN_TOKENS:
            cached = 0
        else:
            cached -= (cached - self.MIN_TOKENS) % self.STEP
        return sum(tokens) - cached, cached


class Meter:
    """The per-turn cache numbers of one side, over the turns after its first cut."""

    def __init__(self, name: str, count: Callable[[str], int]) -> None:
        self.name, self.tokens = name, count
        self.previous: list[str] | None = None
        self.cache = PromptCache()
        self.turns = self.kept = self.cached = self.total = self.folds = 0
        self.cost = 0.0
        self.reasons: dict[str, int] = {}

    def observe(self, request: Request, measured: bool, reason: str | None = None) -> None:
        prefixes, read = self.cache.read(request)
        previous, self.previous = self.previous, prefixes
        if not measured or previous is None:
            return
        cached = sum(map(self.tokens, request.elements[:read]))
        total = sum(map(self.tokens, request.elements))
        self.turns += 1
        self.kept += prefixes[: len(previous)] == previous
        self.cached += cached
        self.total += total
        self.cost += CACHE_READ * cached + CACHE_WRITE * (total - cached)
        if reason is not None:
            self.reasons[reason] = self.reasons.get(reason, 0) + 1
