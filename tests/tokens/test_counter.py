"""TiktokenCounter: text, blocks, messages and tools, against raw tiktoken."""

from __future__ import annotations

import json
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from app.core.settings import Settings
from app.tokens.base import BareMessage, TokenCounter
from app.tokens.counter import (
    CACHE_MIN_CHARS,
    TOKENS_PER_BLOCK,
    TOKENS_PER_MESSAGE,
    TOKENS_PER_NAME,
    TOKENS_PER_TOOL,
    TOKENS_PER_TOOL_CALL,
    TiktokenCounter,
    counter_for,
    counter_for_encoding,
)
from app.tokens.encodings import get_encoding
from app.tokens.media import media_rules
from app.tokens.registry import load_registry
from tests.support.media import png

ENC = get_encoding("cl100k_base")
COUNTER = counter_for_encoding("cl100k_base")
# The cookbook primes every reply with <|start|>assistant<|message|>: 3 tokens once per request,
# part of its totals but of no stored message.
REPLY_PRIMING_TOKENS = 3


def raw(text: str) -> int:
    return len(ENC.encode(text, disallowed_special=()))


def compact(value: object) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


class TestText:
    def test_is_a_token_counter(self) -> None:
        counter: TokenCounter = COUNTER
        assert counter.count_text("hello world") == 2
        assert COUNTER.encoding_name == "cl100k_base"

    def test_empty_text_is_zero(self) -> None:
        assert COUNTER.count_text("") == 0
        assert COUNTER.count_content("") == 0
        assert COUNTER.count_content([]) == 0

    def test_special_token_text_is_counted_as_ordinary_text(self) -> None:
        text = "before <|endoftext|> after"
        assert COUNTER.count_text(text) == raw(text)
        assert COUNTER.count_text(text) > raw("before  after") + 1  # not one special token

    @settings(max_examples=200)
    @given(st.text())
    def test_matches_raw_tiktoken(self, text: str) -> None:
        assert COUNTER.count_text(text) == raw(text)

    def test_string_content_is_its_text(self) -> None:
        assert COUNTER.count_content("The quick brown fox") == raw("The quick brown fox")

    def test_blocks_add_overhead_each(self) -> None:
        tool_input = {"path": "app/main.py", "lines": [1, 2]}
        blocks: list[dict[str, Any]] = [
            {"type": "text", "text": "Reading the file."},
            {"type": "tool_use", "id": "toolu_1", "name": "read_file", "input": tool_input},
            {"type": "image", "source": {"type": "base64", "data": png(800, 600)}},
        ]
        expected = (
            3 * TOKENS_PER_BLOCK
            + raw("Reading the file.")
            + raw("read_file")
            + raw(compact(tool_input))
            + 640  # 800 × 600 / 750: the image by its pixels (tests/tokens/test_media.py)
        )
        assert COUNTER.count_content(blocks) == expected

    def test_tool_result_counts_nested_content(self) -> None:
        nested = [{"type": "text", "text": "line one"}, {"type": "text", "text": "line two"}]
        as_string = {"type": "tool_result", "tool_use_id": "t1", "content": "exit 0"}
        as_blocks = {"type": "tool_result", "tool_use_id": "t1", "content": nested}
        assert COUNTER.count_content([as_string]) == TOKENS_PER_BLOCK + raw("exit 0")
        assert COUNTER.count_content([as_blocks]) == TOKENS_PER_BLOCK + COUNTER.count_content(
            nested
        )

    def test_unknown_block_counts_its_json(self) -> None:
        block = {"type": "thinking", "thinking": "Let me see… 日本語", "signature": "abc"}
        assert COUNTER.count_content([block]) == TOKENS_PER_BLOCK + raw(compact(block))


class TestMessages:
    def test_plain_message_is_content_plus_framing_and_role(self) -> None:
        tokens = COUNTER.count_message(BareMessage(role="user", content="Fix the bug"))
        assert tokens == TOKENS_PER_MESSAGE + raw("user") + raw("Fix the bug")

    def test_name_tool_calls_and_tool_call_id(self) -> None:
        calls = [
            {
                "id": "c1",
                "type": "function",
                "function": {"name": "get_weather", "arguments": '{"city":"Paris"}'},
            }
        ]
        assistant = COUNTER.count_message(
            BareMessage(role="assistant", content=None, name="bot", tool_calls=calls)
        )
        assert assistant == (
            TOKENS_PER_MESSAGE
            + raw("assistant")
            + TOKENS_PER_NAME
            + raw("bot")
            + raw("get_weather")
            + raw('{"city":"Paris"}')
            + TOKENS_PER_TOOL_CALL
        )
        tool = COUNTER.count_message(
            BareMessage(role="tool", content="18°C", tool_call_id="call_abc123")
        )
        assert tool == TOKENS_PER_MESSAGE + raw("tool") + raw("18°C") + raw("call_abc123")

    def test_openai_cookbook_example_matches_api_prompt_tokens(self) -> None:
        # OpenAI cookbook "How to count tokens with tiktoken": the API reports 129 prompt
        # tokens for these messages on gpt-3.5-turbo-0613 / gpt-4-0613 (cl100k_base).
        messages: list[dict[str, Any]] = [
            {
                "role": "system",
                "content": "You are a helpful, pattern-following assistant "
                "that translates corporate jargon into plain English.",
            },
            {
                "role": "system",
                "name": "example_user",
                "content": "New synergies will help drive top-line growth.",
            },
            {
                "role": "system",
                "name": "example_assistant",
                "content": "Things working well together will increase revenue.",
            },
            {
                "role": "system",
                "name": "example_user",
                "content": "Let's circle back when we "
                "have more bandwidth to touch base on opportunities for increased leverage.",
            },
            {
                "role": "system",
                "name": "example_assistant",
                "content": "Let's talk later when we're less busy about how to do better.",
            },
            {
                "role": "user",
                "content": "This late pivot means we don't have time to boil "
                "the ocean for the client's project.",
            },
        ]
        counted = sum(COUNTER.count_message(BareMessage(**m)) for m in messages)
        assert counted + REPLY_PRIMING_TOKENS == 129


class TestTools:
    def test_each_definition_is_its_json_plus_overhead(self) -> None:
        tools: list[dict[str, Any]] = [
            {
                "name": "bash",
                "description": "Run a command",
                "input_schema": {"type": "object", "properties": {"cmd": {"type": "string"}}},
            },
            {"type": "web_search_20250305", "name": "web_search"},
        ]
        expected = sum(TOKENS_PER_TOOL + raw(compact(tool)) for tool in tools)
        assert COUNTER.count_tools(tools) == expected
        assert COUNTER.count_tools([]) == 0


class TestCounterFor:
    @pytest.mark.parametrize(
        ("first", "second", "shared"),
        [
            ("claude-sonnet-4-5", "gpt-4", True),
            ("gpt-4o", "gpt-5", True),
            ("gpt-4o", "gpt-4", False),
        ],
    )
    def test_text_counts_shared_per_encoding(self, first: str, second: str, shared: bool) -> None:
        """A counter per encoding and media rule; the remembered text counts are one per
        encoding, whatever the media rule."""
        registry = load_registry(Settings())
        a, b = counter_for(registry.get(first)), counter_for(registry.get(second))
        assert (a._long_counts is b._long_counts) is shared
        assert isinstance(a, TiktokenCounter)
        assert a.encoding_name == registry.get(first).encoding
        assert a.media_rule.name == registry.get(first).media
        assert counter_for(registry.get(first)) is a


class TestLongTextCache:
    @settings(max_examples=30, deadline=None)
    @given(st.text(min_size=CACHE_MIN_CHARS, max_size=3 * CACHE_MIN_CHARS))
    def test_cached_count_equals_fresh_encoding(self, text: str) -> None:
        counter = TiktokenCounter(ENC)
        first, second = counter.count_text(text), counter.count_text(text)
        assert first == second == len(ENC.encode_ordinary(text))

    def test_cache_evicts_least_recently_used(self, monkeypatch: pytest.MonkeyPatch) -> None:
        texts = [f"{i:02d} " + "word " * CACHE_MIN_CHARS for i in range(10)]
        monkeypatch.setattr("app.tokens.counter.CACHE_MAX_CHARS", 3 * len(texts[0]))
        counter = TiktokenCounter(ENC)
        counts = [counter.count_text(t) for t in texts]
        assert list(counter._long_counts) == texts[-3:]
        assert counter._long_counts.chars == 3 * len(texts[0])
        assert [counter.count_text(t) for t in texts] == counts

    def test_counters_of_one_encoding_share_one_bound(
        self, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """Counters that differ only by media rule remember text in one cache, one bound."""
        texts = [f"{i:02d} " + "word " * CACHE_MIN_CHARS for i in range(10)]
        monkeypatch.setattr("app.tokens.counter.CACHE_MAX_CHARS", 3 * len(texts[0]))
        claude = TiktokenCounter(ENC)
        openai = claude.with_media(media_rules()["openai-tiles-4o"])
        for i, text in enumerate(texts):
            (claude if i % 2 else openai).count_text(text)
        assert claude._long_counts is openai._long_counts
        assert list(openai._long_counts) == texts[-3:]

    def test_clear_cache_forgets_counts(self) -> None:
        counter = TiktokenCounter(ENC)
        counter.count_text("x" * CACHE_MIN_CHARS)
        counter.clear_cache()
        assert not counter._long_counts and counter._long_counts.chars == 0

    def test_threads_share_the_cache_safely(self, monkeypatch: pytest.MonkeyPatch) -> None:
        texts = [f"{i:02d} " + "token " * CACHE_MIN_CHARS for i in range(12)]
        monkeypatch.setattr("app.tokens.counter.CACHE_MAX_CHARS", 2 * len(texts[0]))
        counter = TiktokenCounter(ENC)
        expected = [len(ENC.encode_ordinary(t)) for t in texts]
        with ThreadPoolExecutor(max_workers=4) as pool:  # constant eviction under contention
            rounds = list(pool.map(lambda _: [counter.count_text(t) for t in texts], range(8)))
        assert all(counts == expected for counts in rounds)
        assert counter._long_counts.chars == sum(len(t) for t in counter._long_counts)


# Long texts that start alike: words, long unbroken runs and blank runs, so pieces are cut
# both at spaces and at the fixed width.
_CHUNKS = st.sampled_from(["lorem ipsum ", "x" * 5000, " " * 300, "\n\n", "déjà vu, ", "42 "])


@settings(max_examples=40, deadline=None)
@given(
    head=st.lists(_CHUNKS, min_size=8, max_size=40),
    cut=st.floats(0, 1),
    tail=st.lists(_CHUNKS, max_size=12),
)
def test_a_text_that_starts_like_the_last_one_counts_as_a_fresh_counter_counts_it(
    head: list[str], cut: float, tail: list[str]
) -> None:
    """The pieces of the last long text are reused only where they are the same pieces: the
    count after it equals the count of a counter that never saw it."""
    first = "".join(head) * 3
    second = first[: int(len(first) * cut)] + "".join(tail) * 3
    seen = TiktokenCounter(ENC)
    seen.count_text(first)
    assert seen.count_text(second) == TiktokenCounter(ENC).count_text(second)
