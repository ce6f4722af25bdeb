"""The prompt-cache bench's provider model (bench/cache_model.py): a request reads the longest
prefix of whole elements that an earlier request ended with a breakpoint."""

from __future__ import annotations

from typing import Any

from bench.cache_model import AutomaticCache, Meter, PromptCache, Request, as_request

MARK = {"cache_control": {"type": "ephemeral"}}
TOOLS = [{"name": "read_file", "description": "Read", "input_schema": {"type": "object"}}]


def _message(text: str, marked: bool = False) -> dict[str, Any]:
    return {"role": "user", "content": [{"type": "text", "text": text, **(MARK if marked else {})}]}


def _cached(*requests: Request) -> int:
    """Elements the last request reads from the cache (a token per element)."""
    meter = Meter("side", lambda element: 1)
    for request in requests[:-1]:
        meter.observe(request, measured=True)
    before = meter.cached
    meter.observe(requests[-1], measured=True)
    return meter.cached - before


def test_elements_are_tools_each_system_block_and_each_message() -> None:
    system = [{"type": "text", "text": "S", **MARK}, {"type": "text", "text": "summary"}]
    request = as_request(TOOLS, system, [{"role": "user", "content": "hi"}, _message("x", True)])
    assert len(request.elements) == 5 and request.marked == [False, True, False, False, True]
    assert request.elements[3] == as_request(None, None, [_message("hi")]).elements[0]


def test_a_prefix_is_read_only_up_to_an_earlier_breakpoint() -> None:
    marked_system = [{"type": "text", "text": "S", **MARK}]
    first = as_request(TOOLS, marked_system, [_message("a"), _message("b", True)])
    appended = as_request(TOOLS, marked_system, [_message("a"), _message("b"), _message("c")])
    assert _cached(first, appended) == 4  # tools, system, a, b
    folded = as_request(TOOLS, marked_system, [_message("summary"), _message("c")])
    assert _cached(first, folded) == 2  # tools + system: its end was a breakpoint
    unmarked = as_request(TOOLS, "S", [_message("a", True)])
    assert _cached(unmarked, as_request(TOOLS, "S", [_message("z")])) == 0


def test_one_block_for_system_and_summary_loses_the_tools_at_a_fold() -> None:
    def joined(summary: str) -> Request:
        return as_request(TOOLS, [{"type": "text", "text": "S" + summary, **MARK}], [_message("m")])

    def split(summary: str) -> Request:
        blocks = [{"type": "text", "text": text, **MARK} for text in ("S", summary)]
        return as_request(TOOLS, blocks, [_message("m")])

    assert _cached(joined("one"), joined("two")) == 0
    assert _cached(split("one"), split("two")) == 2


def test_a_bill_reads_what_was_marked_before_writes_to_its_last_mark_and_pays_the_rest() -> None:
    cache = PromptCache()
    served = as_request(TOOLS, "S", [_message("a"), _message("b", True), _message("c")])
    assert cache.bill(served, lambda element: 1) == (0, 4, 1)  # tools, S, a, b written
    fold = as_request(TOOLS, "S", [_message("a"), _message("b"), _message("c"), _message("i")])
    assert cache.bill(fold, lambda element: 1) == (4, 0, 2)  # read through b; c, i in full


def test_automatic_caching_reads_what_any_request_sent_from_1024_tokens_in_steps_of_128() -> None:
    cache = AutomaticCache()
    tokens = {"tools": 1000, "a": 100, "b": 300, "c": 50}.__getitem__
    assert cache.bill(["tools", "a"], tokens) == (1100, 0)  # nothing sent before
    assert cache.bill(["tools", "b"], tokens) == (1300, 0)  # 1,000 shared: under 1,024
    assert cache.bill(["tools", "a", "b", "c"], tokens) == (1450 - 1024, 1024)  # 1,100 → 1,024
    assert cache.bill(["tools", "a", "b", "c"], tokens) == (1450 - 1408, 1408)  # 1,024 + 3 × 128
