"""Counting a posted history newest → oldest (app/engine/newest.py) serves the
context that counting every message serves, and counts far fewer when the history is long."""

from __future__ import annotations

import dataclasses
import json
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from app.core.context_settings import ContextSettings
from app.core.errors import BudgetTooSmall
from app.engine.assemble import AssemblyInput, AssemblyResult, assemble
from app.engine.items import parse_messages
from app.engine.newest import (
    assemble_handed,
    assemble_newest,
    count_all,
    count_newest_for,
    sent_exactly,
)
from app.tokens.counter import TiktokenCounter, counter_for_encoding

WORDS = ["alpha", "beta", "gamma", "delta", "the", "file", "x = 1", "error:", "\n", "β", "🙂"]


@st.composite
def texts(draw: Any) -> str:
    size = draw(st.sampled_from([0, 3, 20, 120, 700, 2600]))
    seed = draw(st.integers(0, 10_000))
    return " ".join(WORDS[(seed + i * 7) % len(WORDS)] for i in range(size // 5 + 1))


@st.composite
def histories(draw: Any) -> list[dict[str, Any]]:
    """OpenAI- and Anthropic-shaped turns with tool traffic, and the odd broken piece: an
    orphan result, a call without a result, a mid-history system message, an empty text."""
    messages: list[dict[str, Any]] = []
    calls = 0
    for _ in range(draw(st.integers(1, 40))):
        kind = draw(st.sampled_from(["user", "assistant", "openai_tool", "anthropic_tool", "odd"]))
        if kind == "user":
            messages.append({"role": "user", "content": draw(texts())})
        elif kind == "assistant":
            messages.append({"role": "assistant", "content": draw(texts()) or "ok"})
        elif kind == "openai_tool":
            calls += 1
            arguments = json.dumps({"path": f"f{calls}.py", "body": draw(texts())})
            function = {"name": "read", "arguments": arguments}
            call = {"id": f"c{calls}", "type": "function", "function": function}
            messages.append({"role": "assistant", "content": None, "tool_calls": [call]})
            if draw(st.booleans()) or draw(st.booleans()):
                messages.append(
                    {"role": "tool", "tool_call_id": f"c{calls}", "content": draw(texts())}
                )
        elif kind == "anthropic_tool":
            calls += 1
            use = {
                "type": "tool_use",
                "id": f"t{calls}",
                "name": "grep",
                "input": {"q": draw(texts())},
            }
            messages.append({"role": "assistant", "content": [use]})
            result = {"type": "tool_result", "tool_use_id": f"t{calls}", "content": draw(texts())}
            messages.append({"role": "user", "content": [result]})
        else:
            messages.append(
                draw(
                    st.sampled_from(
                        [
                            {"role": "system", "content": "Note: be brief."},
                            {"role": "tool", "tool_call_id": "nowhere", "content": "stray"},
                            {"role": "user", "content": " "},
                        ]
                    )
                )
            )
    return messages


def _both(
    raw: list[dict[str, Any]], request: AssemblyInput, counter: TiktokenCounter
) -> tuple[AssemblyResult | str, AssemblyResult | str]:
    parsed = parse_messages(raw)

    def lazy() -> AssemblyResult:
        # Without the service's fallback, so a wrong window shows here.
        newest = count_newest_for(request, parsed, counter)
        result = assemble_handed(request, newest, counter)
        assert sent_exactly(newest, result), "a message was sent with a floor for its count"
        return result

    def full() -> AssemblyResult:
        messages = tuple(count_all(parsed, counter))
        return assemble(dataclasses.replace(request, messages=messages), counter)

    outcomes: list[AssemblyResult | str] = []
    for run in (lazy, full):
        try:
            outcomes.append(run())
        except BudgetTooSmall as exc:
            outcomes.append(f"too small: {exc.message}")
    return outcomes[0], outcomes[1]


def _comparable(result: AssemblyResult | str) -> Any:
    if isinstance(result, str):
        return result
    sent = [(e.id, e.status, e.tokens) for e in result.explain if e.status != "dropped"]
    return (dataclasses.replace(result, explain=()), sent)


COUNTER = counter_for_encoding("cl100k_base")


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    raw=histories(),
    max_tokens=st.integers(40, 4000),
    keep_recent=st.integers(0, 8),
    fmt=st.sampled_from(["anthropic", "openai", "raw"]),
    pin=st.booleans(),
    prune_target=st.sampled_from([0.3, 0.6, 0.9]),
    summary=st.sampled_from([None, "Earlier: the parser was fixed.", "older facts " * 200]),
    tools=st.sampled_from([None, [{"name": "grep", "description": "search", "input_schema": {}}]]),
)
def test_newest_first_counting_serves_what_counting_everything_serves(
    raw: list[dict[str, Any]],
    max_tokens: int,
    keep_recent: int,
    fmt: Any,
    pin: bool,
    prune_target: float,
    summary: str | None,
    tools: list[dict[str, Any]] | None,
) -> None:
    request = AssemblyInput(
        messages=(),
        context_window=200_000,
        settings=ContextSettings(
            keep_recent=keep_recent, pin_first_message=pin, prune_target=prune_target
        ),
        system_prompt="You are terse.",
        summary=summary,
        tools=tools,
        max_tokens=max_tokens,
        format=fmt,
        mode="never",
    )
    lazy, full = _both(raw, request, COUNTER)
    assert _comparable(lazy) == _comparable(full)


class _Tally:
    """COUNTER, counting how many messages it counts."""

    def __init__(self) -> None:
        self.messages = 0

    def __getattr__(self, name: str) -> Any:
        return getattr(COUNTER, name)

    def count_message(self, message: Any) -> int:
        self.messages += 1
        return COUNTER.count_message(message)


@pytest.mark.parametrize("explain", [False, True])
def test_a_long_history_is_counted_only_near_its_end(explain: bool) -> None:
    raw = [
        {"role": "user" if i % 2 == 0 else "assistant", "content": f"turn {i} " + "word " * 150}
        for i in range(400)
    ]
    request = AssemblyInput(messages=(), context_window=200_000, max_tokens=4000, mode="never")
    tally = _Tally()
    result = assemble_newest(request, parse_messages(raw), tally, explain=explain)  # type: ignore[arg-type]
    assert 0 < result.messages_included < 40
    if explain:  # every message's tokens are reported
        assert tally.messages >= 400
    else:  # the newest window of ~26 messages, and the pinned first message
        assert tally.messages < 40
    lazy, full = _both(raw, request, COUNTER)
    assert _comparable(lazy) == _comparable(full)


def test_only_what_may_be_sent_is_encoded() -> None:
    """Of a long history of bulky tool output, only the newest window is encoded, and of it
    only the excerpts of the messages the engine is sure to prune."""
    raw: list[dict[str, Any]] = [{"role": "user", "content": "fix the parser"}]
    for i in range(300):
        call = {"id": f"c{i}", "type": "function", "function": {"name": "run", "arguments": "{}"}}
        raw.append({"role": "assistant", "content": None, "tool_calls": [call]})
        output = " ".join(f"line {i}.{j}: ok" for j in range(300))  # ≈ 4k characters
        raw.append({"role": "tool", "tool_call_id": f"c{i}", "content": output})
    encoded: list[str] = []

    def encode(text: str) -> list[int]:
        encoded.append(text)
        return COUNTER._encoding.encode_ordinary(text)

    counter = TiktokenCounter(COUNTER._encoding)
    counter._encode = encode
    request = AssemblyInput(messages=(), context_window=200_000, max_tokens=8000, mode="never")
    result = assemble_newest(request, parse_messages(raw), counter, explain=False)
    assert result.pruned and result.dropped
    history = sum(len(str(m["content"] or "")) for m in raw)
    assert sum(map(len, encoded)) < history / 25  # 2.3%; 16% with every window encoded
    lazy, full = _both(raw, request, COUNTER)
    assert _comparable(lazy) == _comparable(full)


def test_the_engine_is_handed_only_the_newest_window() -> None:
    """The history before the cut never reaches the engine; it is reported dropped, and its
    units are counted in the drop warning, as when the engine drops them itself."""
    raw = [
        {"role": "user" if i % 2 == 0 else "assistant", "content": f"turn {i} " + "word " * 150}
        for i in range(400)
    ]
    request = AssemblyInput(messages=(), context_window=200_000, max_tokens=4000, mode="never")
    newest = count_newest_for(request, parse_messages(raw), COUNTER)
    assert len(newest.messages) < 40  # the newest window and the pinned first message
    assert newest.messages[0].id == "0" and len(newest.left_out) > 350
    assert newest.left_out_units == len(newest.left_out)  # plain messages: a unit each
    lazy, full = _both(raw, request, COUNTER)
    assert isinstance(lazy, AssemblyResult) and isinstance(full, AssemblyResult)
    assert lazy.dropped == full.dropped and lazy.warnings == full.warnings
    assert lazy.messages_total == full.messages_total == 400


@pytest.mark.parametrize(
    "odd",
    [
        {"role": "tool", "tool_call_id": "nowhere", "content": "stray"},  # dropped, warned
        {"role": "system", "content": "Note: be brief."},  # rewritten as a user note
        {"role": "user", "content": " "},  # empty: dropped, warned
    ],
)
def test_no_cut_before_a_message_the_engine_would_repair(odd: dict[str, Any]) -> None:
    raw = [
        {"role": "user" if i % 2 == 0 else "assistant", "content": f"turn {i} " + "word " * 150}
        for i in range(200)
    ]
    raw.insert(30, odd)
    request = AssemblyInput(messages=(), context_window=200_000, max_tokens=4000, mode="never")
    newest = count_newest_for(request, parse_messages(raw), COUNTER)
    assert newest.left_out and all(int(i) < 30 for i in newest.left_out)
    lazy, full = _both(raw, request, COUNTER)
    assert _comparable(lazy) == _comparable(full)


def test_no_cut_between_a_call_and_its_result() -> None:
    """A cut falls on a unit boundary: a call whose result lies after the cut is handed over
    with it."""
    raw: list[dict[str, Any]] = [{"role": "user", "content": "start"}]
    for i in range(120):
        call = {"id": f"c{i}", "type": "function", "function": {"name": "run", "arguments": "{}"}}
        raw.append({"role": "assistant", "content": "step " * 60, "tool_calls": [call]})
        raw.append({"role": "user", "content": "go on " * 40})  # between call and result
        raw.append({"role": "tool", "tool_call_id": f"c{i}", "content": "out " * 80})
    request = AssemblyInput(messages=(), context_window=200_000, max_tokens=3000, mode="never")
    newest = count_newest_for(request, parse_messages(raw), COUNTER)
    handed = [m for m in newest.messages if m.id != "0"]
    assert newest.left_out and handed[0].call_ids  # the unit starts at its call
    lazy, full = _both(raw, request, COUNTER)
    assert _comparable(lazy) == _comparable(full)
