"""The floor counter (app/tokens/lower_bound.py) never counts more than tiktoken does."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from app.tokens.base import BareMessage
from app.tokens.counter import counter_for_encoding
from app.tokens.lower_bound import fewest_tokens, lower_bound_counter

ENCODINGS = ["cl100k_base", "o200k_base"]
# Whitespace of every kind tiktoken's patterns and str.split() disagree or agree on, words,
# digits, punctuation, contractions and characters several tokens long.
SPACES = [" ", "  ", "\n", "\r\n", "\t", "\x0b", "\x0c", "\x1c", "\x1d", "\x1e", "\x1f"]
SPACES += ["\x85", "\xa0", "\u2003", "\u2028", "\u3000", "\u200b"]
WORDS = ["word", "Hello", "x", "42", "123456", "'s", "!", "?!", "->", "{}", '"', "é", "β"]
WORDS += ["日本語", "🙂", "<|endoftext|>"]
PIECES = st.sampled_from(SPACES + WORDS)
TEXTS = st.one_of(st.text(), st.lists(PIECES, max_size=40).map("".join))


@pytest.mark.parametrize("encoding", ENCODINGS)
@settings(max_examples=400, deadline=None)
@given(text=TEXTS)
def test_a_text_has_at_least_as_many_tokens_as_words(encoding: str, text: str) -> None:
    exact = counter_for_encoding(encoding)
    assert fewest_tokens(text) <= exact.count_text(text)


@pytest.mark.parametrize("encoding", ENCODINGS)
@settings(max_examples=150, deadline=None)
@given(texts=st.lists(TEXTS, min_size=1, max_size=4), role=st.sampled_from(["user", "tool"]))
def test_a_message_floor_is_under_its_count(encoding: str, texts: list[str], role: str) -> None:
    blocks = [{"type": "text", "text": t} for t in texts]
    call = {"id": "c1", "type": "function", "function": {"name": "f", "arguments": texts[0]}}
    for message in (
        BareMessage(role, texts[0]),
        BareMessage(role, blocks),
        BareMessage("assistant", None, tool_calls=[call]),
    ):
        floor = lower_bound_counter(counter_for_encoding(encoding)).count_message(message)
        assert floor <= counter_for_encoding(encoding).count_message(message)


def test_the_floor_counts_words_and_treats_information_separators_as_letters() -> None:
    assert fewest_tokens("read the file  twice\n") == 4
    assert fewest_tokens("a\x1cb c") == 2  # one piece "a\x1cb" for tiktoken, then " c"
    assert fewest_tokens("") == 0
