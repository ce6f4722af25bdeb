"""The same folds through the real SDKs (anthropic, openai, google-genai) against scripted fakes
of the Messages API, OpenAI Responses, OpenAI Chat Completions, an OpenAI-compatible server (a
base URL, no key) and Gemini: what is sent (checked against the SDKs' own types), the usage
recorded, every failure falling back to `rule` within the deadline with its reason, and folds
on a served prefix."""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace
from typing import Any

import pytest
from google.genai import types as genai
from pydantic import BaseModel

from app.core.settings import Settings
from app.engine.types import Message
from app.summarizers.base import CachedPrefix, SummaryRequest, SummaryResult
from app.summarizers.factory import DEFAULT_MODELS, open_model, open_summarizer
from app.summarizers.models.openai import openai_api
from app.summarizers.summary_cache import cache_key
from app.tokens.counter import TiktokenCounter
from tests.summarizers.helpers import InMemorySummaryCache, conversation
from tests.support.fake_anthropic import FakeAnthropic
from tests.support.fake_gemini import FakeGemini
from tests.support.fake_http import FakeModelAPI, Recorded, text_of
from tests.support.fake_openai import FakeOpenAI
from tests.support.official_types import (
    assert_official_anthropic,
    assert_official_chat,
    assert_official_function_tools,
    assert_official_gemini,
    assert_official_items,
)

DEADLINE = 1.5
REPLY = "Task progress: `KeyError: 'retries'` still open."


@dataclass(frozen=True)
class Provider:
    """One API the summarizer can be pointed at, and what its failures are called."""

    name: str
    fake: Callable[[], FakeModelAPI]
    settings: Callable[[Any], dict[str, Any]]
    path: str  # the end of the path a fold posts to
    rate_limited: str  # the reason of a 429
    server_error: str  # the reason of a 500
    sdk: str  # its summarizer provider, which names its errors

    def start(self) -> FakeModelAPI:
        return self.fake().start()  # type: ignore[return-value]


PROVIDERS = [
    Provider(
        "anthropic",
        FakeAnthropic,
        lambda fake: {"anthropic_api_key": "sk-ant-test", "anthropic_base_url": fake.base_url},
        "/v1/messages",
        "anthropic 429 rate_limit_error",
        "anthropic 500 api_error",
        "anthropic",
    ),
    Provider(
        "responses",
        FakeOpenAI,
        lambda fake: {"openai_api_key": "sk-test-openai", "openai_base_url": fake.openai_base_url},
        "/v1/responses",
        "openai 429 rate_limit_exceeded",
        "openai 500 server_error",
        "openai",
    ),
    Provider(
        "chat",
        FakeOpenAI,
        lambda fake: {
            "openai_api_key": "sk-test-openai",
            "openai_base_url": fake.openai_base_url,
            "summarizer_openai_api": "chat",
        },
        "/v1/chat/completions",
        "openai 429 rate_limit_exceeded",
        "openai 500 server_error",
        "openai",
    ),
    Provider(
        "compatible",
        lambda: FakeOpenAI(compatible=True),
        lambda fake: {"summarizer_base_url": fake.openai_base_url, "summarizer_model": "qwen3"},
        "/v1/chat/completions",
        "openai 429 RateLimitError",
        "openai 500 InternalServerError",
        "openai",
    ),
    Provider(
        "gemini",
        FakeGemini,
        lambda fake: {"gemini_api_key": "gemini-test-key", "gemini_base_url": fake.base_url},
        ":generateContent",
        "gemini 429 RESOURCE_EXHAUSTED",
        "gemini 500 INTERNAL",
        "gemini",
    ),
]
BY_NAME = {provider.name: provider for provider in PROVIDERS}


def provider_settings(provider: Provider, fake: FakeModelAPI, **overrides: Any) -> Settings:
    values: dict[str, Any] = {
        "summarizer_provider": provider.sdk,
        "anthropic_api_key": None,
        "openai_api_key": None,
        "gemini_api_key": None,
        "summary_timeout_s": DEADLINE,
        "summary_max_retries": 0,
        **provider.settings(fake),
        **overrides,
    }
    return Settings(_env_file=None, **values)


@pytest.fixture(params=PROVIDERS, ids=lambda provider: provider.name)
def api(request) -> Iterator[tuple[Provider, FakeModelAPI]]:
    provider: Provider = request.param
    fake = provider.start()
    yield provider, fake
    fake.stop()


def transcript() -> list[Message]:
    """Three messages, each counted at 200 tokens (a reply is checked against what it read)."""
    messages = conversation(
        ("user", "Fix the flaky test in tests/test_sync.py. Never touch migrations/."),
        ("assistant", "Running `pytest -q`: KeyError: 'retries', exit code: 1"),
        ("user", "Keep going."),
    )
    return [replace(message, tokens=200) for message in messages]


async def fold(
    provider: Provider, fake: FakeModelAPI, counter: TiktokenCounter, **overrides: Any
) -> tuple[SummaryResult, float]:
    return await fold_request(
        provider, fake, counter, SummaryRequest(transcript(), None, 300), **overrides
    )


async def fold_request(
    provider: Provider,
    fake: FakeModelAPI,
    counter: TiktokenCounter,
    request: SummaryRequest,
    **overrides: Any,
) -> tuple[SummaryResult, float]:
    """One `llm` fold through the production factory (its own client, closed after)."""
    settings = provider_settings(provider, fake, **overrides)
    started = time.monotonic()
    async with open_summarizer("llm", settings=settings, counter=counter, cache=None) as llm:
        result = await llm.summarize(request)
    return result, time.monotonic() - started


def assert_official(provider: Provider, body: dict[str, Any]) -> None:
    """The body as the provider's SDK types take it."""
    if provider.name == "anthropic":
        assert_official_anthropic(body["messages"])
    elif provider.name == "responses":
        assert_official_items(body["input"])
        assert_official_function_tools(body.get("tools", []))
    elif provider.name == "gemini":
        system = body.get("systemInstruction")
        assert_official_gemini(body["contents"], text_of(system) if system else None)
    else:
        assert_official_chat(body["messages"])


class TestSuccess:
    async def test_the_reply_is_the_summary_and_its_usage_is_recorded(self, api, counter) -> None:
        provider, fake = api
        fake.reply = lambda request: REPLY
        fake.cached_tokens = 1200
        result, _ = await fold(provider, fake, counter)
        (request,) = fake.requests
        assert (result.method, result.fallback, result.text) == ("llm", None, REPLY)
        assert result.prompt == "fresh"
        assert result.usage.input_tokens == len(request.prompt) // 4  # the uncached part
        assert result.usage.cache_read_tokens == 1200
        assert result.usage.cache_write_tokens == 0
        assert result.usage.output_tokens == len(REPLY) // 4
        expected = "qwen3" if provider.name == "compatible" else DEFAULT_MODELS[provider.sdk]
        assert result.model == expected

    async def test_what_is_sent_is_what_the_sdk_types_take(self, api, counter) -> None:
        provider, fake = api
        await fold(provider, fake, counter)
        (request,) = fake.requests
        assert request.path.endswith(provider.path)
        assert_official(provider, request.body)
        assert "Fix the flaky test in tests/test_sync.py" in request.prompt
        assert "<transcript>" in request.prompt

    async def test_system_prompt_limit_and_key(self, api, counter) -> None:
        provider, fake = api
        await fold(provider, fake, counter)
        body, headers = fake.requests[0].body, fake.requests[0].headers
        if provider.name == "anthropic":
            assert "never instructions" in body["system"]
            assert body["max_tokens"] == 300
            key = headers.get("x-api-key") or headers["authorization"].removeprefix("Bearer ")
            assert key == "sk-ant-test"
        elif provider.name == "responses":
            assert "never instructions" in body["instructions"]
            assert body["max_output_tokens"] == 300
            assert headers["authorization"] == "Bearer sk-test-openai"
        elif provider.name == "gemini":
            assert "never instructions" in text_of(body["systemInstruction"])
            assert body["generationConfig"]["maxOutputTokens"] == 300
            assert headers["x-goog-api-key"] == "gemini-test-key"
        else:  # Chat: the system prompt is the first message
            assert body["messages"][0]["role"] == "system"
            assert "never instructions" in body["messages"][0]["content"]
            compatible = provider.name == "compatible"
            limit = "max_tokens" if compatible else "max_completion_tokens"
            assert body[limit] == 300 and len(body) == 3  # model, messages, the one limit
            key = "not-needed" if compatible else "sk-test-openai"
            assert headers["authorization"] == f"Bearer {key}"

    async def test_gemini_thinking_is_billed_as_output(self, counter) -> None:
        fake = FakeGemini(thoughts_tokens=40).start()
        try:
            result, _ = await fold(BY_NAME["gemini"], fake, counter)
        finally:
            fake.stop()
        assert result.usage.output_tokens == len("Task progress: summarized.") // 4 + 40


class TestFailuresFallBackToRule:
    @pytest.mark.parametrize(
        "behaviour", ["429", "500", "hang", "truncated", "malformed", "empty", "refusal"]
    )
    async def test_failure_gives_the_rule_summary_with_its_reason(
        self, api, counter, behaviour
    ) -> None:
        provider, fake = api
        fake.default = behaviour
        result, elapsed = await fold(provider, fake, counter)
        assert result.method == "fallback"
        assert result.fallback in expected_reasons(provider, behaviour)
        assert elapsed < DEADLINE + 0.5  # the deadline holds, whatever the server does
        assert "Never touch migrations/." in result.text  # the rule summary of the request

    @pytest.mark.parametrize("retry_after", ["3600", "90"])
    async def test_retry_after_is_cut_by_the_deadline(self, api, counter, retry_after) -> None:
        """The openai SDK gives up at once on a retry-after over two minutes and sleeps one
        under it; google-genai retries on its own backoff: the deadline bounds them all."""
        provider, fake = api
        fake.default, fake.retry_after = "429", retry_after
        result, elapsed = await fold(provider, fake, counter, summary_max_retries=3)
        assert result.method == "fallback"
        assert result.fallback in (f"timeout after {DEADLINE}s", provider.rate_limited)
        assert elapsed < DEADLINE + 0.5
        assert 1 <= len(fake.requests) <= 3

    @pytest.mark.parametrize("provider", PROVIDERS, ids=lambda provider: provider.name)
    async def test_connection_refused(self, provider, counter) -> None:
        fake = provider.start()
        fake.stop()  # its port is closed now
        result, _ = await fold(provider, fake, counter)
        assert result.fallback == f"{provider.sdk} connection error"


def expected_reasons(provider: Provider, behaviour: str) -> tuple[str, ...]:
    """The reason each failure is reported with. A hung server meets the fold's deadline and
    the SDK's timeout (both `summary_timeout_s`) at once: either may be first to say so."""
    return {
        "429": (provider.rate_limited,),
        "500": (provider.server_error,),
        "hang": (f"timeout after {DEADLINE}s", f"{provider.sdk} request timed out"),
        "truncated": (f"{provider.sdk} connection error",),
        "malformed": ("malformed response (JSONDecodeError)",),
        "empty": ("invalid reply: empty reply",),
        "refusal": ("invalid reply: model refused",),
    }[behaviour]


# A served context per format, as Foldwise renders it: system, tools and the conversation,
# with a tool call and its result.
SYSTEM = "You are a careful coding agent. Work in /repo."
RESPONSES_TOOL = {
    "type": "function",
    "name": "bash",
    "description": "Run a shell command.",
    "parameters": {"type": "object", "properties": {"command": {"type": "string"}}},
    "strict": False,
}
CHAT_TOOL = {
    "type": "function",
    "function": {
        "name": "bash",
        "description": "Run a shell command.",
        "parameters": {"type": "object", "properties": {"command": {"type": "string"}}},
    },
}
GEMINI_TOOL = {
    "functionDeclarations": [
        {
            "name": "bash",
            "description": "Run a shell command.",
            "parametersJsonSchema": {
                "type": "object",
                "properties": {"command": {"type": "string"}},
            },
        }
    ]
}
PREFIXES = {
    "anthropic": CachedPrefix(
        format="anthropic",
        model="claude-sonnet-4-6",
        system=[{"type": "text", "text": SYSTEM, "cache_control": {"type": "ephemeral"}}],
        messages=[
            {"role": "user", "content": "Fix the flaky test in tests/test_sync.py."},
            {
                "role": "assistant",
                "content": [
                    {
                        "type": "tool_use",
                        "id": "toolu_1",
                        "name": "bash",
                        "input": {"command": "pytest -q"},
                    }
                ],
            },
            {
                "role": "user",
                "content": [
                    {
                        "type": "tool_result",
                        "tool_use_id": "toolu_1",
                        "content": "KeyError: 'retries'\nexit code: 1",
                        "cache_control": {"type": "ephemeral"},
                    }
                ],
            },
            {"role": "assistant", "content": "The retries key is missing."},
        ],
        tools=[
            {
                "name": "bash",
                "description": "Run a shell command.",
                "input_schema": {"type": "object", "properties": {"command": {"type": "string"}}},
            }
        ],
        keep_last=1,
        span_end="KeyError: 'retries'",
    ),
    "responses": CachedPrefix(
        format="openai_responses",
        model="gpt-5",
        system=SYSTEM,
        messages=[
            {"role": "user", "content": "Fix the flaky test in tests/test_sync.py."},
            {
                "type": "function_call",
                "call_id": "call_1",
                "name": "bash",
                "arguments": '{"command": "pytest -q"}',
            },
            {
                "type": "function_call_output",
                "call_id": "call_1",
                "output": "KeyError: 'retries'\nexit code: 1",
            },
            {"type": "message", "role": "assistant", "content": "The retries key is missing."},
        ],
        tools=[RESPONSES_TOOL],
        keep_last=1,
        span_end="KeyError: 'retries'",
    ),
    "chat": CachedPrefix(
        format="openai",
        model="gpt-4.1",
        system=None,
        messages=[
            {"role": "system", "content": SYSTEM},
            {"role": "user", "content": "Fix the flaky test in tests/test_sync.py."},
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {
                        "id": "call_1",
                        "type": "function",
                        "function": {"name": "bash", "arguments": '{"command": "pytest -q"}'},
                    }
                ],
            },
            {
                "role": "tool",
                "tool_call_id": "call_1",
                "content": "KeyError: 'retries'\nexit code: 1",
            },
            {"role": "assistant", "content": "The retries key is missing."},
        ],
        tools=[CHAT_TOOL],
        keep_last=1,
        span_end="KeyError: 'retries'",
    ),
    "gemini": CachedPrefix(
        format="gemini",
        model="gemini-2.5-pro",
        system=SYSTEM,
        messages=[
            {"role": "user", "parts": [{"text": "Fix the flaky test in tests/test_sync.py."}]},
            {
                "role": "model",
                "parts": [
                    {
                        "functionCall": {"name": "bash", "args": {"command": "pytest -q"}},
                        "thoughtSignature": "c2lnbmF0dXJlLTE=",
                    }
                ],
            },
            {
                "role": "user",
                "parts": [
                    {
                        "functionResponse": {
                            "name": "bash",
                            "response": {"output": "KeyError: 'retries'\nexit code: 1"},
                        }
                    }
                ],
            },
            {"role": "model", "parts": [{"text": "The retries key is missing."}]},
        ],
        tools=[GEMINI_TOOL],
        keep_last=1,
        span_end="KeyError: 'retries'",
    ),
}


def sent(provider: Provider, body: dict[str, Any]) -> tuple[Any, Any, list[Any], Any]:
    """(system, tools, turns before the last, the last turn) of a request as the fake read it."""
    if provider.name == "anthropic":
        turns = body["messages"]
        return body.get("system"), body.get("tools"), turns[:-1], turns[-1]
    if provider.name == "responses":
        turns = body["input"]
        return body.get("instructions"), body.get("tools"), turns[:-1], turns[-1]
    if provider.name == "gemini":
        turns = body["contents"]
        return text_of(body["systemInstruction"]), body.get("tools"), turns[:-1], turns[-1]
    turns = body["messages"]
    return None, body.get("tools"), turns[:-1], turns[-1]


def prefix_request(prefix: CachedPrefix) -> SummaryRequest:
    return SummaryRequest(transcript(), None, 300, prefix=prefix)


class TestOnPrefix:
    @pytest.mark.parametrize("name", ["anthropic", "responses", "chat", "gemini"])
    async def test_the_served_context_is_repeated_then_the_instruction(self, name, counter) -> None:
        provider = BY_NAME[name]
        prefix = PREFIXES[name]
        fake = provider.start()
        fake.cached_tokens = 900
        try:
            result, _ = await fold_request(provider, fake, counter, prefix_request(prefix))
        finally:
            fake.stop()
        assert (result.method, result.prompt) == ("llm", "cached_prefix")
        assert result.usage.cache_read_tokens == 900
        (request,) = fake.requests
        if name == "gemini":  # the model is in the path
            assert request.path.endswith(f"/models/{prefix.model}:generateContent")
        else:
            assert request.body["model"] == prefix.model
        system, tools, before, last = sent(provider, request.body)
        assert system == prefix.system
        if name == "gemini":  # the SDK writes the prefix again: the same, as Gemini reads it
            assert gemini_reads(genai.Tool, tools) == gemini_reads(genai.Tool, prefix.tools)
            assert gemini_reads(genai.Content, before) == gemini_reads(
                genai.Content, prefix.messages
            )
            assert last == {"role": "user", "parts": [{"text": request.prompt}]}
        else:  # byte for byte: the same JSON, key order included
            assert json.dumps([tools, before]) == json.dumps([prefix.tools, prefix.messages])
            assert last == {"role": "user", "content": request.prompt}
            assert_official(provider, request.body)
        assert "KeyError: 'retries'" in request.prompt  # the instruction names the span's end

    async def test_a_compatible_server_folds_a_fresh_prompt(self, counter) -> None:
        """The served context names the conversation's model, which a local server lacks."""
        provider = BY_NAME["compatible"]
        fake = provider.start()
        try:
            result, _ = await fold_request(
                provider, fake, counter, prefix_request(PREFIXES["chat"])
            )
        finally:
            fake.stop()
        assert (result.method, result.prompt) == ("llm", "fresh")
        (request,) = fake.requests
        assert request.body["model"] == "qwen3"
        assert "<transcript>" in request.prompt

    async def test_gemini_binary_parts_arrive_as_the_same_bytes(self, counter) -> None:
        """The SDK writes inline data and signatures in url-safe base64 and some field names in
        snake_case (`mime_type`, `parameters_json_schema`), which Gemini reads the same."""
        provider = BY_NAME["gemini"]
        image = {"inlineData": {"mimeType": "image/png", "data": "iVBORw0KGgo+/A=="}}
        first = {"role": "user", "parts": [{"text": "What is this?"}, image]}
        prefix = replace(PREFIXES["gemini"], messages=[first, *PREFIXES["gemini"].messages[1:]])
        fake = provider.start()
        try:
            result, _ = await fold_request(provider, fake, counter, prefix_request(prefix))
        finally:
            fake.stop()
        assert result.prompt == "cached_prefix"
        _, _, before, _ = sent(provider, fake.requests[0].body)
        assert before[0]["parts"][1]["inlineData"]["data"] == "iVBORw0KGgo-_A=="
        assert gemini_reads(genai.Content, before) == gemini_reads(genai.Content, prefix.messages)

    @pytest.mark.parametrize("name", ["responses", "chat", "gemini"])
    async def test_what_the_adapter_hands_the_sdk_is_what_its_types_take(self, name) -> None:
        settings = Settings(
            _env_file=None,
            openai_api_key="sk-test-openai",
            gemini_api_key="gemini-test-key",
            summarizer_openai_api="chat" if name == "chat" else "auto",
        )
        model = open_model(settings, BY_NAME[name].sdk, "m")
        try:
            prompt = model.on_prefix(PREFIXES[name], "Summarize the span.")
        finally:
            await model.close()
        if name == "responses":
            assert_official_items(prompt.messages)
            assert_official_function_tools(prompt.tools or [])
        elif name == "chat":
            assert_official_chat(prompt.messages)
        else:
            assert prompt.system is None or isinstance(prompt.system, str)
            assert_official_gemini(prompt.messages, prompt.system, prompt.tools)
        assert prompt.messages[-1] in (
            {"role": "user", "content": "Summarize the span."},
            {"role": "user", "parts": [{"text": "Summarize the span."}]},
        )


def gemini_reads(model: type[BaseModel], values: Any) -> list[dict[str, Any]]:
    """`values` as Gemini reads them: through the SDK's types from their JSON, where a field
    may be spelt either way and bytes come in either base64 alphabet."""
    return [
        model.model_validate_json(json.dumps(value)).model_dump(exclude_none=True)
        for value in values or ()
    ]


def test_recorded_prompt_reads_every_shape() -> None:
    assert Recorded("/", {}, {"input": [{"role": "user", "content": "a"}]}).prompt == "a"
    assert Recorded("/", {}, {"contents": [{"parts": [{"text": "b"}]}]}).prompt == "b"
    assert Recorded("/", {}, {"messages": [{"content": [{"text": "c"}]}]}).prompt == "c"


class TestOpenAIApi:
    @pytest.mark.parametrize(
        ("values", "api"),
        [
            ({}, "responses"),
            ({"summarizer_base_url": "http://127.0.0.1:9/v1"}, "chat"),
            (
                {
                    "summarizer_base_url": "http://127.0.0.1:9/v1",
                    "summarizer_openai_api": "responses",
                },
                "responses",
            ),
            ({"summarizer_openai_api": "chat"}, "chat"),
        ],
    )
    def test_auto_is_chat_on_a_compatible_server(self, values, api) -> None:
        assert openai_api(Settings(_env_file=None, **values)) == api

    async def test_a_compatible_server_may_be_asked_through_responses(self, counter) -> None:
        fake = FakeOpenAI(compatible=True).start()
        provider = BY_NAME["compatible"]
        try:
            result, _ = await fold(provider, fake, counter, summarizer_openai_api="responses")
        finally:
            fake.stop()
        assert result.method == "llm"
        (request,) = fake.requests
        assert request.path == "/v1/responses"
        assert request.headers["authorization"] == "Bearer not-needed"

    async def test_the_compatible_server_gets_the_openai_key_when_there_is_one(
        self, counter
    ) -> None:
        """A gateway (LiteLLM) takes a key; OPENAI_API_KEY is where the SDK looks for it."""
        fake = FakeOpenAI(compatible=True).start()
        try:
            await fold(BY_NAME["compatible"], fake, counter, openai_api_key="sk-gateway")
        finally:
            fake.stop()
        assert fake.requests[0].headers["authorization"] == "Bearer sk-gateway"


class TestCache:
    def test_the_provider_is_in_the_key_unless_anthropic(self) -> None:
        request = SummaryRequest(transcript(), None, 300)
        anthropic = cache_key("llm", "m", request)
        assert (
            cache_key("llm", "m", request, provider="anthropic") == anthropic
        )  # old keys stay valid
        assert len({anthropic, cache_key("llm", "m", request, provider="openai")}) == 2
        assert cache_key("llm", "m", request, provider="gemini") != cache_key(
            "llm", "m", request, provider="openai"
        )

    async def test_a_second_fold_is_served_from_the_cache(self, api, counter) -> None:
        provider, fake = api
        settings = provider_settings(provider, fake)
        cache = InMemorySummaryCache()
        request = SummaryRequest(transcript(), None, 300)
        results = []
        for _ in range(2):
            async with open_summarizer(
                "llm", settings=settings, counter=counter, cache=cache
            ) as llm:
                results.append(await llm.summarize(request))
        assert [result.cached for result in results] == [False, True]
        assert len(fake.requests) == 1
        key = cache_key("llm", results[0].model, request, provider=provider.sdk)
        assert key in cache.entries
