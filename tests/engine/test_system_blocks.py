"""The system prompt and the summary as two cached parts (app/engine/prompt_cache.py): a fold
leaves the first system block, tools before it, byte-identical and marked; breakpoints keep
their priority within the limit of four; usage counts each block as it is sent."""

from __future__ import annotations

import dataclasses
from typing import Any

from hypothesis import given

from app.core.context_settings import ContextSettings
from app.engine.assemble import AssemblyInput, AssemblyResult, assemble
from app.engine.prompt_cache import CACHE_CONTROL, MAX_BREAKPOINTS, unmarked
from app.engine.render import SUMMARY_HEADER, summary_section
from tests.engine.strategies import FakeCounter, assembly_requests, make_message
from tests.support.assembly import assemble_or_too_small
from tests.support.hypothesis_settings import PROPERTY
from tests.support.markers import count_markers

COUNTER = FakeCounter(1)  # a token per character: a miscounted separator shows
PROMPT = "You are a careful coding agent."
TOOLS = ({"name": "read_file", "description": "Read a file", "input_schema": {"type": "object"}},)
HISTORY = tuple(
    make_message(seq, "user" if seq % 2 else "assistant", f"turn {seq}", COUNTER)
    for seq in range(1, 11)
)
MARKED = {"cache_control": CACHE_CONTROL}


def _context(summary: str | None, **changes: Any) -> AssemblyResult:
    request = AssemblyInput(
        messages=HISTORY,
        context_window=0,
        max_tokens=5_000,
        system_prompt=PROMPT,
        tools=TOOLS,
        summary=summary,
        summary_through_seq=4 if summary else 0,
        settings=ContextSettings(pin_first_message=False),
        mode="never",
    )
    return assemble(dataclasses.replace(request, **changes), COUNTER)


def _client_marked(count: int) -> tuple[Any, ...]:
    """HISTORY with `count` of its user turns carrying the client's own markers."""
    out = list(HISTORY)
    for index in range(count):
        block = {"type": "text", "text": f"note {index}", **MARKED}
        seq = 2 * index + 5
        out[seq - 1] = make_message(seq, "user", [block], COUNTER)
    return tuple(out)


class TestAFold:
    def test_keeps_the_first_system_block_byte_identical_and_marked(self) -> None:
        before, after = _context(None), _context("Facts of the first fold.")
        assert before.system == [{"type": "text", "text": PROMPT, **MARKED}]
        assert isinstance(after.system, list) and after.system[0] == before.system[0]
        assert after.system[1] == {
            "type": "text",
            "text": "\n\n" + SUMMARY_HEADER + "Facts of the first fold.",
            **MARKED,
        }
        assert after.breakpoints == 3 and before.breakpoints == 2
        refolded = _context("Facts of the second fold.")
        assert isinstance(refolded.system, list) and refolded.system[0] == before.system[0]

    def test_the_prefix_chain_keeps_tools_and_system_prompt(self) -> None:
        before, after = _context(None), _context("Facts.")
        assert after.prefix_chain[0] == before.prefix_chain[0]
        assert after.prefix_chain[1] != before.prefix_chain[1]
        usage = after.usage
        assert after.prefix_tokens[0] == usage.system_tokens + usage.tools_tokens
        assert after.prefix_tokens[1] == after.prefix_tokens[0] + usage.summary_tokens
        assert after.prefix_tokens[-1] == usage.estimated_tokens

    def test_the_openai_system_message_keeps_its_prompt_prefix(self) -> None:
        before, after = _context(None, format="openai"), _context("Facts.", format="openai")
        assert after.messages[0]["content"].startswith(before.messages[0]["content"])
        assert after.prefix_chain[0] == before.prefix_chain[0]
        assert after.prefix_chain[1] != before.prefix_chain[1]
        assert after.prefix_tokens[0] == after.usage.system_tokens + after.usage.tools_tokens

    def test_a_summary_pair_also_keeps_the_system_prompt_marked(self) -> None:
        after = _context("Facts.", settings=ContextSettings(summary_placement="messages"))
        assert after.system == [{"type": "text", "text": PROMPT, **MARKED}]
        assert after.messages[1]["content"][-1]["cache_control"] == CACHE_CONTROL
        assert after.breakpoints == 3


class TestTheLimitOfFour:
    def test_the_newest_message_then_the_summary_then_the_system_prompt(self) -> None:
        two = _context("Facts.", messages=_client_marked(2))
        assert two.breakpoints == 2 and count_markers(two.messages) == 3
        assert two.system == [
            {"type": "text", "text": PROMPT},
            {"type": "text", "text": "\n\n" + SUMMARY_HEADER + "Facts.", **MARKED},
        ]
        three = _context("Facts.", messages=_client_marked(3))
        assert (
            three.breakpoints == 1 and three.system == PROMPT + "\n\n" + SUMMARY_HEADER + "Facts."
        )
        for result in (two, three):
            assert count_markers([result.messages, result.system]) == MAX_BREAKPOINTS

    def test_one_block_without_a_summary_or_without_a_system_prompt(self) -> None:
        assert _context(None).system == [{"type": "text", "text": PROMPT, **MARKED}]
        alone = _context("Facts.", system_prompt=None)
        assert alone.system == [{"type": "text", "text": SUMMARY_HEADER + "Facts.", **MARKED}]


class TestUsage:
    def test_each_block_is_counted_as_sent(self) -> None:
        result = _context("Facts.")
        assert isinstance(result.system, list)
        prompt, section = (COUNTER.count_text(block["text"]) for block in result.system)
        assert (prompt, section) == (result.usage.system_tokens, result.usage.summary_tokens)

    def test_a_summary_without_a_system_prompt_is_counted_without_a_separator(self) -> None:
        result = _context(
            "Facts.", system_prompt=None, settings=ContextSettings(cache_breakpoints=False)
        )
        assert result.system == SUMMARY_HEADER + "Facts."
        assert result.usage.summary_tokens == COUNTER.count_text(result.system)


@PROPERTY
@given(assembly_requests())
def test_the_system_sent_is_its_parts_each_counted_as_sent(case: tuple[AssemblyInput, Any]) -> None:
    request, counter = case
    result = assemble_or_too_small(request, counter)
    if result is None or request.format == "openai":
        return
    prompt = request.system_prompt or None
    sent = result.summary_sent if request.settings.summary_placement == "system" else None
    section = summary_section(prompt, sent) if sent else None
    parts = [text for text in (prompt, section) if text]
    if isinstance(result.system, list):
        assert [block["text"] for block in unmarked(result.system)] == parts
        assert all(block.get("cache_control") in (None, CACHE_CONTROL) for block in result.system)
    else:
        assert result.system == ("".join(parts) or None)
    assert result.usage.system_tokens == counter.count_text(prompt or "")
    if section:
        assert result.usage.summary_tokens == counter.count_text(section)
