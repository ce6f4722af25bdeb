"""OpenAI Responses items (docs/reference.md §Message shapes) over random histories: a call
is never sent without its output, a reasoning item never without the items it precedes, and
items → stored → items keeps what each shape can carry."""

from __future__ import annotations

import copy
import json
from collections.abc import Callable, Sequence
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from app.core.errors import BudgetTooSmall
from app.engine.assemble import AssemblyInput, AssemblyResult, assemble
from app.engine.render import Format, render
from app.engine.responses import validate_responses
from app.engine.shapes import normalize_message
from app.engine.types import Message
from tests.engine.strategies import (
    COUNTERS,
    FakeCounter,
    histories,
    settings_strategy,
    stored_items,
)
from tests.support.hypothesis_settings import PROPERTY
from tests.support.official_types import assert_official_items
from tests.support.responses_items import said

Item = dict[str, Any]
words = st.text(alphabet="abcdef ghij\nklm", min_size=1, max_size=60).filter(str.strip)
bulky = st.integers(min_value=2_000, max_value=12_000).map(lambda n: ("out " * n)[:n])


def output_message(item_id: str, *texts: str) -> Item:
    """An assistant message as the Responses API returns it (and the Agents SDK keeps it)."""
    parts = [{"type": "output_text", "text": t, "annotations": []} for t in texts]
    content: dict[str, Any] = {"content": parts}
    return {"type": "message", "id": item_id, "role": "assistant", "status": "completed"} | content


@st.composite
def item_histories(draw: Callable[..., Any]) -> list[Item]:
    """What an Agents SDK session holds: user turns, each answered by steps of [reasoning?,
    message?, function_call*] and their outputs (in any order), the last call maybe pending."""
    items: list[Item] = []
    calls = 0
    turns = draw(st.integers(min_value=1, max_value=6))
    for turn in range(turns):
        items.append(said("user", *draw(st.lists(words, min_size=1, max_size=2))))
        steps = draw(st.integers(min_value=0, max_value=3))
        for step in range(steps):
            final = step == steps - 1
            width = draw(st.integers(min_value=0 if final else 1, max_value=3))
            if draw(st.booleans()):
                summary = [{"type": "summary_text", "text": draw(words)}]
                reasoning = {"type": "reasoning", "id": f"rs_{turn}_{step}", "summary": summary}
                if draw(st.booleans()):
                    reasoning["encrypted_content"] = draw(words)
                items.append(reasoning)
            posted_ids = draw(st.booleans())  # as the SDK keeps them: id and status

            def with_ids(item: Item, prefix: str, posted_ids: bool = posted_ids) -> Item:
                return (
                    item | {"id": f"{prefix}_{len(items)}", "status": "completed"}
                    if (posted_ids)
                    else item
                )

            if width == 0 or draw(st.booleans()):
                texts = draw(st.lists(words, min_size=1, max_size=2))
                message_id = f"msg_{len(items)}"
                items.append(
                    output_message(message_id, *texts) if posted_ids else said("assistant", *texts)
                )
            ids = [f"call_{calls + i}" for i in range(width)]
            calls += width
            for call_id in ids:
                arguments = json.dumps({"path": draw(words), "body": draw(st.one_of(words, bulky))})
                call = {"type": "function_call", "call_id": call_id, "name": "run"}
                items.append(with_ids(call | {"arguments": arguments}, "fc"))
            if ids and turn == turns - 1 and final and draw(st.booleans()):
                return items  # the newest call, still pending
            for call_id in draw(st.permutations(ids)):
                output = {"type": "function_call_output", "call_id": call_id}
                items.append(with_ids(output | {"output": draw(st.one_of(words, bulky))}, "fco"))
    return items


def rendered(messages: Sequence[Message], fmt: Format) -> list[Item]:
    out = render(messages, fmt, system_prompt=None, summary=None, placement="system", tools=None)
    return out.messages


def reposted(messages: Sequence[Item]) -> list[Message]:
    """Provider-shaped messages posted back (the other shapes' append path)."""
    counter = FakeCounter()
    out = []
    for seq, raw in enumerate(messages, 1):
        normalized = normalize_message(raw, seq - 1)
        out.append(
            Message(
                id=str(seq),
                seq=seq,
                role=normalized.role,
                content=normalized.content,
                tokens=counter.count_message(normalized),
                tool_calls=normalized.tool_calls,
                tool_call_id=normalized.tool_call_id,
            )
        )
    return out


def without_reasoning(items: Sequence[Item]) -> list[Item]:
    """What the other shapes carry of items: no reasoning, no item ids or status (so assistant
    messages come back in the easy form)."""
    out = []
    for item in items:
        if item["type"] == "reasoning":
            continue
        if item.get("role") == "assistant" and "id" in item:
            item = said("assistant", *(p["text"] for p in item["content"]))
        out.append({k: v for k, v in item.items() if k not in ("id", "status")})
    return out


def joined_parts(items: Sequence[Item]) -> list[Item]:
    """What OpenAI Chat carries of a message: its text parts as one string (a user message
    posted back so is a string, which openai_responses gives back in the easy form)."""
    out = []
    for item in items:
        if item["type"] == "message" and isinstance(item["content"], list):
            kind = item["content"][0]["type"]
            text = "\n".join(p["text"] for p in item["content"])
            if item["role"] == "user":
                item = {"role": "user", "content": text}
            else:
                item = {**item, "content": [{"type": kind, "text": text}]}
        out.append(item)
    return out


@st.composite
def requests(draw: Callable[..., Any]) -> tuple[list[Item], AssemblyInput, Any]:
    counter = draw(COUNTERS)
    items = draw(item_histories())
    messages = stored_items(items, counter)
    request = AssemblyInput(
        messages=tuple(messages),
        context_window=draw(st.sampled_from([2_000, 8_000, 200_000])),
        settings=draw(settings_strategy),
        system_prompt=draw(st.sampled_from([None, "You are careful."])),
        max_tokens=draw(st.one_of(st.none(), st.integers(min_value=200, max_value=20_000))),
        format="openai_responses",
        mode=draw(st.sampled_from(["auto", "never", "force"])),
    )
    return items, request, counter


def _assemble(request: AssemblyInput, counter: Any) -> AssemblyResult | None:
    try:
        return assemble(request, counter)
    except BudgetTooSmall:
        return None


def _sources(result: AssemblyResult) -> list[tuple[Item, str]]:
    return list(zip(result.messages, result.sources, strict=True))


@PROPERTY
@given(requests())
def test_calls_and_outputs_move_together(case: tuple[list[Item], AssemblyInput, Any]) -> None:
    items, request, counter = case
    result = _assemble(request, counter)
    if result is None:
        return
    assert result.usage.total_tokens <= result.usage.budget
    assert validate_responses(result.messages) == []
    assert_official_items(result.messages)
    assert isinstance(result.system, str | None)
    sent = result.messages
    calls = [(i, m["call_id"]) for i, m in enumerate(sent) if m["type"] == "function_call"]
    outputs = {m["call_id"]: i for i, m in enumerate(sent) if m["type"] == "function_call_output"}
    last_group = [i for i, (_, s) in enumerate(_sources(result)) if s == result.sources[-1]]
    for index, call_id in calls:
        if call_id not in outputs:  # only the newest, pending call
            assert index in last_group and items[-1]["type"] == "function_call"
        else:
            assert outputs[call_id] > index
    posted_calls = {i["call_id"] for i in items if i["type"] == "function_call"}
    assert set(outputs) <= posted_calls
    assert result.messages_included == len(set(result.sources))


@PROPERTY
@given(requests())
def test_reasoning_stays_with_the_items_it_precedes(
    case: tuple[list[Item], AssemblyInput, Any],
) -> None:
    items, request, counter = case
    before = copy.deepcopy(items)
    result = _assemble(request, counter)
    assert items == before
    if result is None:
        return
    posted = {i["id"]: (n, i) for n, i in enumerate(items) if i["type"] == "reasoning"}
    pairs = _sources(result)
    for position, (item, source) in enumerate(pairs):
        if item["type"] != "reasoning":
            continue
        at, original = posted[item["id"]]
        assert item == original  # byte-for-byte
        following, next_source = pairs[position + 1]
        assert next_source == source
        assert following["type"] in ("reasoning", "function_call", "message")
        # Every call it preceded in the post is sent, right after it.
        assert calls_after(result.messages, position) == calls_after(items, at)


def calls_after(items: Sequence[Item], start: int) -> list[str]:
    """Call ids of the assistant-side run that follows items[start]."""
    found = []
    for item in items[start + 1 :]:
        if item["type"] == "function_call":
            found.append(item["call_id"])
        elif item["type"] != "reasoning" and item.get("role") != "assistant":
            break
    return found


@PROPERTY
@given(item_histories())
def test_items_round_trip_through_storage(items: list[Item]) -> None:
    assert rendered(stored_items(items), "openai_responses") == items
    assert_official_items(items)


@PROPERTY
@given(item_histories())
def test_items_round_trip_through_the_other_shapes(items: list[Item]) -> None:
    """anthropic keeps all but reasoning; openai (Chat) also joins a message's text parts."""
    messages = stored_items(items)
    via_anthropic = reposted(rendered(messages, "anthropic"))
    assert rendered(via_anthropic, "openai_responses") == without_reasoning(items)
    via_openai = reposted(rendered(messages, "openai"))
    assert rendered(via_openai, "openai_responses") == joined_parts(without_reasoning(items))


@PROPERTY
@given(st.data())
def test_other_shapes_render_as_valid_items(data: st.DataObject) -> None:
    """Anthropic and Chat histories (thinking, orphans, images, pending calls) as items."""
    counter = data.draw(COUNTERS)
    history = data.draw(histories(counter))
    request = AssemblyInput(
        messages=tuple(history),
        context_window=200_000,
        settings=data.draw(settings_strategy),
        max_tokens=data.draw(st.one_of(st.none(), st.integers(min_value=300, max_value=20_000))),
        format="openai_responses",
        mode=data.draw(st.sampled_from(["auto", "never"])),
    )
    result = _assemble(request, counter)
    if result is None:
        return
    assert validate_responses(result.messages) == []
    assert_official_items(result.messages)
    assert "thinking" not in json.dumps(result.messages)
    assert result.usage.total_tokens <= result.usage.budget
