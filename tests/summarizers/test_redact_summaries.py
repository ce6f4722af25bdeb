"""Secrets never reach a stored summary or an LLM prompt, wherever an excerpt is cut.

Issue 21: the rule summarizer cut its excerpts (a 400-character task, a 200-character request,
a 300-character error line, a token-counted headline) and redacted afterwards, so a cut through
a key left 14–30 of its characters that no pattern recognised any more. Redaction now runs on
the messages first; these tests put the cut everywhere across every format.
"""

from __future__ import annotations

import re
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from app.engine.types import Message
from app.summarizers.base import SummaryRequest
from app.summarizers.redact import redact_messages
from app.summarizers.rule import rule_summary
from app.summarizers.rule.extract import REQUEST_CHARS, STEP_CHARS, TASK_CHARS
from app.summarizers.rule.facts import MAX_ITEM_CHARS
from app.summarizers.rule.outcomes import MAX_ERROR_LINE_CHARS
from app.summarizers.rule.scan import READ_HEAD_CHARS, excerpt, readable
from app.tokens.counter import TiktokenCounter
from tests.summarizers.helpers import anthropic_summarizer, conversation, llm_settings
from tests.summarizers.secret_samples import FAMILIES, SAMPLES, survivors
from tests.support.fake_anthropic import FakeAnthropic

# Pieces this short can match the summary's other text by chance; a kept piece of a key was
# 14–30 characters before the fix.
FEW = 3
SECRETS = {**{k: s.text for k, s in SAMPLES.items()}, **FAMILIES}
# The part of each that must go (for a SAS URL the signature, for curl the password, …).
MUST_GO = {**{k: s.secret for k, s in SAMPLES.items()}, **FAMILIES}
FILLER = "lorem ipsum dolor sit amet "


def _leaked(secret: str, text: str) -> int:
    unlabelled = re.sub(r"\[REDACTED:[a-z_]*\]?", " ", text)  # a label may itself be cut
    return max(survivors(line, unlabelled) for line in secret.splitlines())


def _padding(length: int) -> str:
    """`length` characters of prose ending in a space (a key is a word of its own)."""
    if length <= 0:
        return ""
    return (FILLER * (length // len(FILLER) + 1))[: length - 1] + " "


def _placed(where: str, secret: str, before: int) -> list[Message]:
    """A conversation with `secret` after `before` characters of one excerpt's text."""
    text = _padding(before) + secret + " " + FILLER * 4
    call = {"type": "tool_use", "id": "t1", "name": "bash", "input": {"command": "make deploy"}}
    ok = {"type": "tool_result", "tool_use_id": "t1", "content": "done\nexit code: 0"}
    items: list[Any] = [("user", "Deploy the service to staging and check the health page.")]
    if where == "task":
        items = [("user", text)]
    elif where == "request":
        items.append(("user", f"Please {text}"))
    elif where == "decision":
        items.append(("assistant", f"We decided to {text}"))
    elif where == "step":
        items += [("assistant", f"Next {text}"), ("assistant", [call]), ("user", [ok])]
    elif where == "error":
        failed = {**ok, "content": f"Error: {text}\nexit code: 1", "is_error": True}
        items += [("assistant", [call]), ("user", [failed])]
    elif where == "command":
        run = {**call, "input": {"command": f"echo {text}"}}
        items += [("assistant", [run]), ("user", [ok])]
    return conversation(*items)


# Where the extractor cuts each placement (characters from the start of the excerpt).
LIMITS = {
    "task": TASK_CHARS,
    "request": REQUEST_CHARS - len("Please "),
    "decision": MAX_ITEM_CHARS - len("We decided to "),
    "step": STEP_CHARS - len("Next "),
    "error": MAX_ERROR_LINE_CHARS - len("Error: "),
    "command": 200,
}


@pytest.mark.parametrize("name", list(SECRETS))
@pytest.mark.parametrize("where", list(LIMITS))
def test_a_cut_through_a_secret_keeps_none_of_it(
    counter: TiktokenCounter, name: str, where: str
) -> None:
    """The cut at the start, middle and end of the secret's first line, in every excerpt."""
    secret = SECRETS[name]
    first_line = secret.split("\n", 1)[0]
    for into in (3, len(first_line) // 2, len(first_line) - 3):
        messages = _placed(where, secret, LIMITS[where] - into)
        for budget in (4000, 150):
            summary = rule_summary(messages, None, budget, counter)
            assert _leaked(MUST_GO[name], summary) <= FEW, (into, budget, summary)


@settings(
    max_examples=150,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(
    name=st.sampled_from(sorted(SECRETS)),
    where=st.sampled_from(sorted(LIMITS)),
    before=st.integers(min_value=0, max_value=700),
    budget=st.sampled_from([60, 150, 400, 4000]),
)
def test_no_cut_position_keeps_a_piece_of_a_secret(
    counter: TiktokenCounter, name: str, where: str, before: int, budget: int
) -> None:
    summary = rule_summary(_placed(where, SECRETS[name], before), None, budget, counter)
    assert _leaked(MUST_GO[name], summary) <= FEW


def test_a_previous_summary_holding_a_secret_is_redacted_before_it_is_cut(
    counter: TiktokenCounter,
) -> None:
    secret = FAMILIES["anthropic_key"]
    previous = f"Task: {_padding(380)}{secret} and more\nCurrent focus: deploying"
    summary = rule_summary([], previous, 60, counter)
    assert _leaked(secret, summary) <= FEW


# --- A key split across adjacent tool results of one turn -------------------------------------

KEY = FAMILIES["github_token"]
HALVES = (f"Error: pushed with {KEY[:14]}", f"{KEY[14:]} rejected by the remote")


def _openai_split() -> list[Message]:
    calls = [
        {"id": f"c{i}", "type": "function", "function": {"name": "bash", "arguments": "{}"}}
        for i in (1, 2)
    ]
    return conversation(
        ("user", "Push the release branch."),
        ("assistant", "", {"tool_calls": calls}),
        ("tool", HALVES[0], {"tool_call_id": "c1"}),
        ("tool", HALVES[1], {"tool_call_id": "c2"}),
    )


def _anthropic_split() -> list[Message]:
    calls = [{"type": "tool_use", "id": f"t{i}", "name": "bash", "input": {}} for i in (1, 2)]
    results = [
        {"type": "tool_result", "tool_use_id": "t1", "content": HALVES[0], "is_error": True},
        {
            "type": "tool_result",
            "tool_use_id": "t2",
            "content": [{"type": "text", "text": HALVES[1]}],
        },
    ]
    return conversation(
        ("user", "Push the release branch."), ("assistant", calls), ("user", results)
    )


@pytest.mark.parametrize("shape", [_openai_split, _anthropic_split])
def test_a_key_split_across_adjacent_tool_results_goes_from_both(
    counter: TiktokenCounter, shape: Any
) -> None:
    messages = shape()
    redacted = redact_messages(messages)
    texts = str([(m.content, m.tool_calls) for m in redacted])
    assert KEY[:14] not in texts and KEY[14:] not in texts
    assert texts.count("[REDACTED:github_token]") == 2
    assert redacted[1] is messages[1]  # a message without secrets is not copied
    assert [m.result_ids for m in redacted] == [m.result_ids for m in messages]
    summary = rule_summary(messages, None, 4000, counter)
    assert _leaked(KEY, summary) <= FEW


SPLIT_FAMILIES = ["stripe_key", "stripe_restricted", "github_token", "github_fine_grained"]


def _results_one_message_each(first: str, second: str) -> list[Message]:
    """Each tool result in a user message of its own, nothing between them."""
    calls = [{"type": "tool_use", "id": f"t{i}", "name": "bash", "input": {}} for i in (1, 2)]
    return conversation(
        ("assistant", calls),
        ("user", [{"type": "tool_result", "tool_use_id": "t1", "content": first}]),
        ("user", [{"type": "tool_result", "tool_use_id": "t2", "content": second}]),
    )


def _adjacent_text_blocks(first: str, second: str) -> list[Message]:
    return conversation(
        ("user", [{"type": "text", "text": first}, {"type": "text", "text": second}])
    )


def _openai_results(first: str, second: str) -> list[Message]:
    calls = [
        {"id": f"c{i}", "type": "function", "function": {"name": "bash", "arguments": "{}"}}
        for i in (1, 2)
    ]
    return conversation(
        ("assistant", "", {"tool_calls": calls}),
        ("tool", [{"type": "text", "text": first}], {"tool_call_id": "c1"}),
        ("tool", second, {"tool_call_id": "c2"}),
    )


def _texts(messages: list[Message]) -> list[str]:
    out = []
    for message in messages:
        for block in message.content if isinstance(message.content, list) else [message.content]:
            if isinstance(block, str):
                out += [block] if block else []
            elif block.get("type") == "text":
                out.append(block["text"])
            elif isinstance(block.get("content"), str):
                out.append(block["content"])
    return out


@pytest.mark.parametrize(
    "shape", [_results_one_message_each, _adjacent_text_blocks, _openai_results]
)
@pytest.mark.parametrize("family", SPLIT_FAMILIES)
@pytest.mark.parametrize("cut", [6, 10, 14])
def test_a_stripe_or_github_key_split_across_adjacent_pieces_goes_from_each(
    shape: Any, family: str, cut: int
) -> None:
    key = FAMILIES[family]
    first, second = f"Error: pushed with {key[:cut]}", f"{key[cut:]} rejected by the remote"
    kind = "stripe_key" if family.startswith("stripe") else "github_token"
    label = f"[REDACTED:{kind}]"
    texts = _texts(redact_messages(shape(first, second)))
    assert texts == [f"Error: pushed with {label}", f"{label} rejected by the remote"]


def test_results_of_different_turns_are_not_joined() -> None:
    """Only one turn's results are one output: a half in the next turn stays (it is not a
    secret on its own, and joining unrelated texts would invent matches)."""
    calls = [{"type": "tool_use", "id": f"t{i}", "name": "bash", "input": {}} for i in (1, 2)]
    messages = conversation(
        ("assistant", [calls[0]]),
        ("user", [{"type": "tool_result", "tool_use_id": "t1", "content": HALVES[0]}]),
        ("assistant", [calls[1]]),
        ("user", [{"type": "tool_result", "tool_use_id": "t2", "content": HALVES[1]}]),
    )
    assert redact_messages(messages) == messages


def test_every_string_a_summarizer_reads_is_redacted_and_ids_stay() -> None:
    secret = FAMILIES["anthropic_key"]
    calls = [{"id": "c1", "type": "function", "function": {"name": "bash", "arguments": ""}}]
    calls[0]["function"]["arguments"] = f'{{"command": "export KEY={secret}"}}'  # type: ignore[index]
    messages = conversation(
        ("user", [{"type": "text", "text": f"use {secret}"}]),
        ("assistant", [{"type": "tool_use", "id": "t1", "name": "w", "input": {"data": [secret]}}]),
        ("user", [{"type": "tool_result", "tool_use_id": "t1", "content": secret}]),
        ("assistant", [{"type": "thinking", "thinking": secret, "signature": "c2ln"}]),
        ("assistant", "", {"tool_calls": calls}),
        ("tool", secret, {"tool_call_id": "c1"}),
        ("assistant", "", {"tool_calls": [{**calls[0], "function": {"arguments": {"k": secret}}}]}),
    )
    redacted = redact_messages(messages)
    assert secret not in str([(m.content, m.tool_calls) for m in redacted])
    assert [(m.call_ids, m.result_ids) for m in redacted] == [
        (m.call_ids, m.result_ids) for m in messages
    ]
    assert str(redacted[3].content[0]["signature"]) == "c2ln"  # type: ignore[index]


# --- The LLM path: redacted before the transcript is chunked and cut --------------------------


async def test_a_message_cut_to_fit_one_llm_call_leaks_no_piece_of_a_key(
    fake_anthropic: FakeAnthropic, counter: TiktokenCounter
) -> None:
    """A message larger than one call is cut to fit (chunking._cut). Keys sit every ~80
    characters, so the cut goes through one of them whatever the tokenizer does."""
    keys = [FAMILIES[name] for name in ("anthropic_key", "github_token", "aws_secret_key")]
    body = " ".join(f"{FILLER[: 5 + i % 30]} {keys[i % 3]}" for i in range(400))
    settings_ = llm_settings(fake_anthropic.base_url, summary_input_tokens=1500)
    llm = anthropic_summarizer(settings_, counter)
    fake_anthropic.reply = lambda r: "Task progress: reading the log."
    try:
        await llm.summarize(SummaryRequest(conversation(("user", body)), None, 200))
    finally:
        await llm.llm.close()
    prompts = "\n".join(r.prompt for r in fake_anthropic.requests)
    assert "[message cut to fit one summarizer call]" in prompts
    assert all(_leaked(key, prompts) <= FEW for key in keys)


@settings(max_examples=60, deadline=None, derandomize=True)
@given(
    head=st.integers(min_value=0, max_value=120_000),
    tail=st.integers(min_value=0, max_value=120_000),
    line=st.integers(min_value=1, max_value=300),
)
def test_the_readable_part_of_a_long_text_excerpts_as_the_text_does(
    head: int, tail: int, line: int
) -> None:
    """A fold redacts only what the rule summarizer may read (`readable`): the same excerpt."""
    text = ("x" * (line - 1) + "\n") * (head // line) + "y" * tail
    assert excerpt(readable(text)) == excerpt(text)


@pytest.mark.parametrize("name", ["pem", "github_token", "jwt"])
def test_a_secret_across_the_excerpt_of_a_long_text_keeps_none_of_it(
    counter: TiktokenCounter, name: str
) -> None:
    """In a text of megabytes only the readable part is redacted: a secret that the head or
    the tail of the excerpt cuts through is still whole there."""
    secret = SAMPLES[name].secret if name in SAMPLES else FAMILIES[name]
    whole = SAMPLES[name].text if name in SAMPLES else secret
    for offset in (READ_HEAD_CHARS - 40, READ_HEAD_CHARS - len(secret) // 2):
        text = "log line\n" * (offset // 9) + "key: " + whole + "\n" + "z\n" * 200_000
        messages = conversation(("user", "read the log"), ("user", text))
        summary = rule_summary(messages, None, 4000, counter)
        assert survivors(secret, summary) <= FEW, (offset, summary)
