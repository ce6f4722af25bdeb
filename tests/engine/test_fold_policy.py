"""The fold decision (app/engine/fold_policy.py), driven directly over every combination of
mode, dry run, fold state, background runner, summarizer kind, budget and settings."""

from __future__ import annotations

import dataclasses

from hypothesis import given
from hypothesis import strategies as st

from app.engine.fold_policy import (
    LLM_FOLD_AHEAD,
    RULE_FOLD_WAIT_S,
    RULE_WAIT_SPAN_TOKENS,
    FoldPolicy,
    FoldState,
    decide,
)

policies = st.builds(
    FoldPolicy,
    calls_llm=st.booleans(),
    fold_ahead=st.one_of(st.none(), st.floats(0.1, 1.5)),
    hard_wait_s=st.one_of(st.none(), st.floats(0, 30)),
)
states = st.builds(
    FoldState,
    mode=st.sampled_from(["auto", "never", "force"]),
    dry_run=st.booleans(),
    due=st.booleans(),
    folded=st.booleans(),
    last_round=st.booleans(),
    background=st.booleans(),
    running=st.booleans(),
    estimated_tokens=st.integers(0, 300_000),
    limit=st.integers(1, 200_000),
    span_tokens=st.integers(0, 2 * RULE_WAIT_SPAN_TOKENS),
)


@given(states, policies)
def test_every_decision_has_a_reason_and_a_wait_only_when_joining(
    state: FoldState, policy: FoldPolicy
) -> None:
    decision = decide(state, policy)
    assert decision.reason
    assert decision.wait_s >= 0
    assert decision.action == "join" or decision.wait_s == 0


@given(states, policies)
def test_never_or_a_fold_already_made_serves(state: FoldState, policy: FoldPolicy) -> None:
    if state.mode == "never" or state.folded:
        assert decide(state, policy).action == "serve"


@given(states, policies)
def test_a_dry_run_never_stores_nor_calls_an_external_model(
    state: FoldState, policy: FoldPolicy
) -> None:
    decision = decide(dataclasses.replace(state, dry_run=True), policy)
    assert decision.action in ("serve", "compute", "skip")
    if decision.action == "compute":
        assert not policy.calls_llm
    if decision.action == "skip":
        assert policy.calls_llm


@given(states, policies)
def test_a_due_fold_is_made_joined_or_given_up(state: FoldState, policy: FoldPolicy) -> None:
    state = dataclasses.replace(state, due=True, dry_run=False, folded=False)
    decision = decide(state, policy)
    if state.mode == "never":
        assert decision.action == "serve"
    elif state.last_round:
        assert decision.action == "unlanded"
    elif state.mode == "force" or not state.background:
        assert decision.action == "fold"
    else:
        assert decision.action == "join"
        assert decision.wait_s == policy.wait_s(state.span_tokens)


@given(states, policies)
def test_nothing_due_serves_or_starts_a_fold_ahead(state: FoldState, policy: FoldPolicy) -> None:
    state = dataclasses.replace(state, due=False)
    decision = decide(state, policy)
    assert decision.action in ("serve", "ahead")
    ahead = (
        state.mode == "auto"
        and not state.dry_run
        and not state.folded
        and state.background
        and not state.running
        and policy.ahead_share < 1
        and state.estimated_tokens >= policy.ahead_share * state.limit
    )
    assert (decision.action == "ahead") == ahead


@given(states, policies, st.integers(0, 100_000))
def test_more_tokens_never_undo_a_fold_ahead(
    state: FoldState, policy: FoldPolicy, more: int
) -> None:
    state = dataclasses.replace(state, due=False)
    if decide(state, policy).action == "ahead":
        grown = dataclasses.replace(state, estimated_tokens=state.estimated_tokens + more)
        assert decide(grown, policy).action == "ahead"


@given(st.booleans(), st.integers(0, 2 * RULE_WAIT_SPAN_TOKENS))
def test_the_defaults_never_wait_for_an_llm_and_briefly_for_a_rule_fold(
    calls_llm: bool, span: int
) -> None:
    policy = FoldPolicy(calls_llm)
    if calls_llm or span > RULE_WAIT_SPAN_TOKENS:
        assert policy.wait_s(span) == 0
    else:
        assert policy.wait_s(span) == RULE_FOLD_WAIT_S
    assert policy.ahead_share == (LLM_FOLD_AHEAD if calls_llm else 1.0)


@given(policies, st.integers(0, 2 * RULE_WAIT_SPAN_TOKENS))
def test_configured_knobs_win(policy: FoldPolicy, span: int) -> None:
    if policy.hard_wait_s is not None:
        assert policy.wait_s(span) == policy.hard_wait_s
    if policy.fold_ahead is not None:
        assert policy.ahead_share == policy.fold_ahead
