"""The LLM summarizer with the real anthropic SDK against the scripted fake Messages API."""

from __future__ import annotations

import hashlib
import json
import time

import pytest

from app.core.settings import Settings
from app.summarizers.base import SummaryCache, SummaryRequest, SummaryResult
from app.summarizers.factory import open_summarizer
from app.summarizers.llm import LLMSummarizer
from app.summarizers.prompts import PROMPT_VERSION
from app.summarizers.rule import PINNED_TASK
from app.summarizers.summary_cache import cache_key, canonical_messages
from app.tokens.base import TokenCounter
from app.tokens.counter import TiktokenCounter
from tests.summarizers.helpers import (
    InMemorySummaryCache,
    anthropic_summarizer,
    conversation,
    llm_settings,
)
from tests.support.fake_anthropic import FakeAnthropic, Recorded

SECRET = "sk-ant-api03-AbCdEfGhIjKlMnOpQrStUvWxYz0123456789"


def transcript() -> list:  # type: ignore[type-arg]
    return conversation(
        ("user", "Fix the flaky test in tests/test_sync.py. Never touch migrations/."),
        (
            "assistant",
            [
                {"type": "text", "text": "Running it."},
                {"type": "tool_use", "id": "t1", "name": "bash", "input": {"command": "pytest -q"}},
            ],
        ),
        (
            "user",
            [
                {
                    "type": "tool_result",
                    "tool_use_id": "t1",
                    "content": f"E   KeyError: 'retries'\nANTHROPIC_API_KEY={SECRET}\nexit code: 1",
                }
            ],
        ),
    )


def summarizer(fake: FakeAnthropic, counter: TiktokenCounter, **overrides: object) -> LLMSummarizer:
    settings = llm_settings(fake.base_url, **overrides)
    return anthropic_summarizer(settings, counter)


async def fold(fake: FakeAnthropic, counter: TiktokenCounter, **overrides: object):
    llm = summarizer(fake, counter, **overrides)
    request = SummaryRequest(
        transcript(), "Task: earlier work on `sync.py`", 300, focus="keep test names"
    )
    started = time.monotonic()
    try:
        result = await llm.summarize(request)
    finally:
        await llm.llm.close()
    return result, time.monotonic() - started


class TestSuccess:
    async def test_ok_reply_is_the_summary(self, fake_anthropic, counter) -> None:
        fake_anthropic.reply = lambda r: "Task progress: `KeyError: 'retries'` still open."
        result, _ = await fold(fake_anthropic, counter)
        assert result.method == "llm"
        assert result.fallback is None
        assert result.text == "Task progress: `KeyError: 'retries'` still open."
        assert result.tokens_in > 0 and result.tokens_out > 0
        assert result.model == "claude-haiku-4-5"

    async def test_prompt_carries_previous_summary_new_messages_and_focus(
        self, fake_anthropic, counter
    ) -> None:
        await fold(fake_anthropic, counter)
        (request,) = fake_anthropic.requests
        assert request.path == "/v1/messages"
        assert request.body["max_tokens"] == 300
        assert "<previous_summary>\nTask: earlier work on `sync.py`" in request.prompt
        assert "Fix the flaky test in tests/test_sync.py" in request.prompt
        assert "keep test names" in request.prompt
        assert "<transcript>" in request.prompt and "never instructions" in request.body["system"]

    async def test_secrets_are_redacted_before_leaving(self, fake_anthropic, counter) -> None:
        await fold(fake_anthropic, counter)
        (request,) = fake_anthropic.requests
        assert SECRET not in request.prompt
        assert "[REDACTED:anthropic_key]" in request.prompt
        assert "E   KeyError: 'retries'" in request.prompt


class TestFailuresFallBackToRule:
    @pytest.mark.parametrize(
        ("behaviour", "reason"),
        [
            ("429", "anthropic 429 rate_limit_error"),
            ("500", "anthropic 500 api_error"),
            ("529", "anthropic 529 overloaded_error"),
            ("401", "anthropic 401 authentication_error"),
            ("empty", "invalid reply: empty reply"),
            ("hang", "timeout after 1.5s"),
            ("slow", "timeout after 1.5s"),
        ],
    )
    async def test_failure_gives_rule_summary_with_reason(
        self, fake_anthropic, counter, behaviour, reason
    ) -> None:
        fake_anthropic.default = behaviour
        result, elapsed = await fold(fake_anthropic, counter)
        assert result.method == "fallback"
        assert result.fallback == reason
        assert elapsed < 1.5 + 0.5  # the deadline holds, whatever the server does
        assert "`pytest -q` → exit 1" in result.text  # the rule summary of the same request
        assert SECRET not in result.text

    async def test_the_fallback_of_a_pinned_session_refers_to_the_first_message(
        self, fake_anthropic, counter
    ) -> None:
        fake_anthropic.default = "500"
        llm = summarizer(fake_anthropic, counter)
        request = SummaryRequest(transcript()[1:], None, 300, task_pinned=True)
        try:
            result = await llm.summarize(request)
        finally:
            await llm.llm.close()
        assert result.method == "fallback"
        assert result.text.startswith(f"Task: {PINNED_TASK}\n")

    async def test_retry_after_an_hour_is_cut_by_the_deadline(
        self, fake_anthropic, counter
    ) -> None:
        fake_anthropic.default = "429"
        result, elapsed = await fold(fake_anthropic, counter, summary_max_retries=2)
        assert result.fallback == "timeout after 1.5s"
        assert elapsed < 2.0
        assert len(fake_anthropic.requests) == 1  # the SDK was sleeping on retry-after: 3600

    async def test_malformed_json(self, fake_anthropic, counter) -> None:
        fake_anthropic.default = "malformed"
        result, _ = await fold(fake_anthropic, counter)
        assert result.method == "fallback"
        assert result.fallback is not None and result.fallback.startswith("malformed response")

    async def test_reply_longer_than_its_input(self, fake_anthropic, counter) -> None:
        fake_anthropic.default = "long"
        result, _ = await fold(fake_anthropic, counter)
        assert result.method == "fallback"
        assert result.fallback is not None and "reply longer than its input" in result.fallback

    async def test_refusal_is_not_a_summary(self, fake_anthropic, counter) -> None:
        fake_anthropic.reply = lambda r: "I'm sorry, I can't help with that."
        result, _ = await fold(fake_anthropic, counter)
        assert result.fallback == "invalid reply: not a summary"

    async def test_connection_refused(self, counter) -> None:
        server = FakeAnthropic().start()
        url = server.base_url
        server.stop()
        settings = llm_settings(url)
        llm = anthropic_summarizer(settings, counter)
        result = await llm.summarize(SummaryRequest(transcript(), None, 300))
        await llm.llm.close()
        assert result.fallback == "anthropic connection error"


class TestOverlongSummary:
    async def test_reply_over_budget_is_recompressed_under_it(
        self, fake_anthropic, counter
    ) -> None:
        lines = [f"- `src/module_{n}.py` changed to handle case {n}" for n in range(60)]
        fake_anthropic.reply = lambda r: "Files & changes:\n" + "\n".join(lines)
        llm = summarizer(fake_anthropic, counter)
        long_input = conversation(*[("user", "padding " * 400)] * 3)
        result = await llm.summarize(SummaryRequest(long_input, None, 120))
        await llm.llm.close()
        assert result.method == "llm"
        assert result.tokens <= 120
        assert counter.count_text(result.text) == result.tokens


class TestChunking:
    async def test_span_larger_than_input_limit_folds_in_order(
        self, fake_anthropic, counter
    ) -> None:
        seen: list[Recorded] = []

        def reply(request: Recorded) -> str:
            seen.append(request)
            return f"summary after call {len(seen)}"

        fake_anthropic.reply = reply
        messages = conversation(*[("user", f"step {n}: " + "detail " * 150) for n in range(12)])
        llm = summarizer(fake_anthropic, counter, summary_input_tokens=1000)
        result = await llm.summarize(SummaryRequest(messages, None, 100))
        await llm.llm.close()
        assert len(seen) > 2
        positions = []
        for index, request in enumerate(seen):
            if index:  # each chunk folds into the summary of the previous one
                assert f"summary after call {index}" in request.prompt
            positions += [n for n in range(12) if f"step {n}:" in request.prompt]
        assert positions == list(range(12))  # every message seen once, in order
        assert result.text == f"summary after call {len(seen)}"

    async def test_failure_mid_way_falls_back_over_all_messages(
        self, fake_anthropic, counter
    ) -> None:
        fake_anthropic.script = ["ok", "500"]
        messages = conversation(
            *[("user", f"Never drop rule {n}. Details: " + "detail " * 150) for n in range(8)]
        )
        llm = summarizer(fake_anthropic, counter, summary_input_tokens=1000)
        result = await llm.summarize(SummaryRequest(messages, None, 400))
        await llm.llm.close()
        assert result.method == "fallback"
        assert all(f"Never drop rule {n}." in result.text for n in range(8))


async def summarize_once(
    request: SummaryRequest, settings: Settings, counter: TokenCounter, cache: SummaryCache
) -> SummaryResult:
    """One `llm` fold through the production factory (its own client, closed after)."""
    async with open_summarizer("llm", settings=settings, counter=counter, cache=cache) as llm:
        return await llm.summarize(request)


class TestCache:
    async def test_second_identical_fold_is_served_from_cache(
        self, fake_anthropic, counter
    ) -> None:
        settings = llm_settings(fake_anthropic.base_url)
        cache = InMemorySummaryCache()
        request = SummaryRequest(transcript(), None, 300)
        first = await summarize_once(request, settings, counter, cache)
        second = await summarize_once(request, settings, counter, cache)
        assert len(fake_anthropic.requests) == 1
        assert (first.cached, second.cached) == (False, True)
        assert second.text == first.text

    def test_pinning_is_part_of_the_key_and_old_keys_stay_valid(self) -> None:
        plain = SummaryRequest(transcript(), None, 300)
        pinned = SummaryRequest(transcript(), None, 300, task_pinned=True)
        assert cache_key("hybrid", "m", plain) != cache_key("hybrid", "m", pinned)
        payload = {
            "strategy": "hybrid",
            "model": "m",
            "prompt": PROMPT_VERSION,
            "previous": None,
            "messages": canonical_messages(plain.messages),
            "focus": None,
            "max_summary_tokens": 300,
        }
        blob = json.dumps(payload, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
        assert cache_key("hybrid", "m", plain) == hashlib.sha256(blob.encode()).hexdigest()

    async def test_fallbacks_are_not_cached(self, fake_anthropic, counter) -> None:
        fake_anthropic.script = ["500"]
        settings = llm_settings(fake_anthropic.base_url)
        cache = InMemorySummaryCache()
        request = SummaryRequest(transcript(), None, 300)
        first = await summarize_once(request, settings, counter, cache)
        second = await summarize_once(request, settings, counter, cache)
        assert (first.method, second.method) == ("fallback", "llm")
        assert len(fake_anthropic.requests) == 2


class TestEdges:
    async def test_single_message_larger_than_a_chunk_is_cut_not_skipped(
        self, fake_anthropic, counter
    ) -> None:
        huge = "HEAD-MARKER " + "log line " * 3000
        llm = summarizer(fake_anthropic, counter, summary_input_tokens=1000)
        result = await llm.summarize(SummaryRequest(conversation(("user", huge)), None, 100))
        await llm.llm.close()
        (request,) = fake_anthropic.requests
        assert "HEAD-MARKER" in request.prompt
        assert "[message cut to fit one summarizer call]" in request.prompt
        assert counter.count_text(request.prompt) < 1000
        assert result.method == "llm"

    async def test_nothing_new_makes_no_call(self, fake_anthropic, counter) -> None:
        llm = summarizer(fake_anthropic, counter)
        result = await llm.summarize(SummaryRequest([], "Task: keep me", 100))
        await llm.llm.close()
        assert fake_anthropic.requests == []
        assert (result.text, result.method) == ("Task: keep me", "rule")
