"""The invariants of docs/reference.md §Invariants over random histories, budgets, counters,
formats and modes."""

from __future__ import annotations

import copy
import math
from collections.abc import Sequence
from typing import Any

import pytest
from hypothesis import given

from app.engine.assemble import SENT, AssemblyInput, assemble
from app.engine.budget import summary_share
from app.engine.render import Format, Rendered
from app.engine.types import Message
from app.engine.units import is_empty
from app.engine.validate import violations
from tests.engine.strategies import FakeCounter, assembly_requests
from tests.support.assembly import assemble_or_too_small, limit
from tests.support.hypothesis_settings import PROPERTY


def _pairing_problems(messages: list[dict[str, Any]]) -> list[str]:
    """Independent check: every result has its call, every call its result (but the last)."""
    calls: list[tuple[int, str]] = []
    results: set[str] = set()
    for index, message in enumerate(messages):
        blocks = message["content"] if isinstance(message.get("content"), list) else []
        calls += [(index, str(b["id"])) for b in blocks if b.get("type") == "tool_use"]
        calls += [(index, str(c["id"])) for c in message.get("tool_calls") or ()]
        found = [str(b["tool_use_id"]) for b in blocks if b.get("type") == "tool_result"]
        found += [str(message["tool_call_id"])] if message.get("tool_call_id") else []
        issued = {call for _, call in calls}
        problems = [f"result {r} before/without call" for r in found if r not in issued]
        if problems:
            return problems
        results |= set(found)
    last = len(messages) - 1
    return [f"call {c} unanswered" for i, c in calls if c not in results and i != last]


@PROPERTY
@given(assembly_requests())
def test_output_is_within_budget_and_valid(case: tuple[AssemblyInput, Any]) -> None:
    request, counter = case
    before = copy.deepcopy(request.messages)
    result = assemble_or_too_small(request, counter)
    assert request.messages == before  # input never altered
    if result is None:
        return
    usage = result.usage
    assert usage.total_tokens <= usage.budget
    assert usage.estimated_tokens == (
        usage.system_tokens + usage.tools_tokens + usage.summary_tokens + usage.message_tokens
    )
    assert usage.total_tokens == math.ceil(usage.estimated_tokens * request.calibration_ratio)
    # Only whether there is a top-level system is checked (openai): a list is anthropic's.
    system = None if result.system is None else str(result.system)
    rendered = Rendered(system, result.messages, result.tools)
    assert result.messages_included == len(result.messages)
    assert violations(rendered, request.format) == []
    assert _pairing_problems(result.messages) == []
    if request.format == "anthropic" and result.messages:
        assert result.messages[0]["role"] == "user"
    if request.format == "openai":
        assert result.system is None


@PROPERTY
@given(assembly_requests())
def test_explain_covers_every_message_once_and_matches_output(
    case: tuple[AssemblyInput, Any],
) -> None:
    request, counter = case
    result = assemble_or_too_small(request, counter)
    if result is None:
        return
    stored = [e for e in result.explain if e.status != "synthetic"]
    assert [e.id for e in stored] == [m.id for m in sorted(request.messages, key=lambda m: m.seq)]
    sent = [e for e in stored if e.status in SENT]
    assert result.messages_total == len(request.messages)
    for entry in result.explain:
        if entry.status == "summarized":
            assert entry.seq <= request.summary_through_seq
    if request.format == "raw":
        pair = 2 if result.summary_sent and request.settings.summary_placement == "messages" else 0
        assert len(result.messages) == len(sent) + pair
        by_id = {m.id: m for m in request.messages}
        for entry, message in zip(sent, result.messages[pair:], strict=True):
            assert message["role"] == by_id[entry.id].role
            if entry.status == "included":
                assert message["content"] == by_id[entry.id].content
    continuation = result.usage.message_tokens - sum(e.tokens for e in sent)
    assert continuation in (0, counter.count_content("(conversation continues)") + 4)


def _pending_ids(messages: Sequence[Message]) -> set[str]:
    answered = {r for m in messages for r in m.result_ids}
    return {c for m in messages for c in m.call_ids if c not in answered}


@PROPERTY
@given(assembly_requests())
def test_fold_plan_is_an_oldest_prefix_of_unsummarized_units(
    case: tuple[AssemblyInput, Any],
) -> None:
    request, counter = case
    result = assemble_or_too_small(request, counter)
    if result is None or result.fold_plan is None:
        return
    assert request.mode != "never"
    plan = result.fold_plan
    ordered = sorted(request.messages, key=lambda m: m.seq)
    first_user = next(
        (m for m in ordered if m.role == "user" and not m.result_ids and not is_empty(m)), None
    )
    plan_ids = {m.id for m in plan.messages}
    assert all(m.seq > request.summary_through_seq for m in plan.messages)
    assert all(m in request.messages for m in plan.messages)  # the stored originals
    if request.settings.pin_first_message and first_user is not None:
        assert first_user.id not in plan_ids
    assert not {c for m in plan.messages for c in m.call_ids} & _pending_ids(request.messages)
    assert plan.through_seq == max(m.seq for m in plan.messages)
    # Contiguous: every message sent before the cut, not pinned and not repaired away, is in it.
    not_sent = {e.id for e in result.explain if e.status == "dropped"}
    for message in ordered:
        if (
            request.summary_through_seq < message.seq <= plan.through_seq
            and message.id not in plan_ids
        ):
            assert message.id in not_sent or (
                first_user is not None and message.id == first_user.id
            )
    # A tool call and its results move together.
    calls = {c for m in plan.messages for c in m.call_ids}
    results = {r for m in plan.messages for r in m.result_ids}
    answered_elsewhere = {r for m in ordered if m.id not in plan_ids for r in m.result_ids}
    assert not calls & answered_elsewhere
    assert results <= calls | {
        r for m in ordered if m.seq <= request.summary_through_seq for r in m.call_ids
    } | (results - {c for m in ordered for c in m.call_ids})


@PROPERTY
@given(assembly_requests())
def test_applying_the_fold_plan_needs_no_second_fold(case: tuple[AssemblyInput, Any]) -> None:
    request, counter = case
    result = assemble_or_too_small(request, counter)
    if result is None or result.fold_plan is None:
        return
    summary = f"Summary of {len(result.fold_plan.messages)} messages."  # a short fake summary
    folded = AssemblyInput(
        **{
            **{f: getattr(request, f) for f in request.__dataclass_fields__},
            "summary": summary,
            "summary_through_seq": result.fold_plan.through_seq,
            "mode": "auto",
        }
    )
    second = assemble_or_too_small(folded, counter)
    if second is None:
        return
    assert second.usage.total_tokens <= second.usage.budget
    plan = result.fold_plan
    # The plan's prediction holds: the folded context costs what it said, or less.
    summary_fits_share = counter.count_text(summary) <= summary_share(
        limit(request), request.settings
    )
    if summary_fits_share and plan.expected_tokens <= limit(request):
        assert second.usage.estimated_tokens <= plan.expected_tokens
    if request.mode == "auto":  # a threshold fold reserves room: the next call is served as is
        assert second.fold_plan is None
    else:  # a forced fold ignores the budget: a threshold fold may still follow
        assert second.fold_plan is None or second.fold_plan.trigger == "threshold"


@PROPERTY
@given(assembly_requests())
def test_verbatim_when_everything_fits(case: tuple[AssemblyInput, Any]) -> None:
    request, counter = case
    roomy = AssemblyInput(
        **{
            **{f: getattr(request, f) for f in request.__dataclass_fields__},
            "max_tokens": 10**9,
            "context_window": 10**9,  # a budget above the window is the window
            "mode": "never",
        }
    )
    verbatim = assemble(roomy, counter)
    if verbatim.usage.estimated_tokens > limit(request):
        return
    result = assemble(request, counter)
    assert result.messages == verbatim.messages
    assert result.explain == verbatim.explain
    assert all(e.status != "truncated" for e in result.explain)
    if request.mode != "force":
        assert result.fold_plan is None


@pytest.mark.parametrize("fmt", ["anthropic", "openai", "raw"])
def test_empty_history_is_valid(fmt: Format) -> None:
    result = assemble(
        AssemblyInput(messages=(), context_window=1000, max_tokens=100, format=fmt),
        FakeCounter(),
    )
    assert result.messages == [] and result.usage.message_tokens == 0
