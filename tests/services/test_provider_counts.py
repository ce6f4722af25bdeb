"""Exact mode (app/services/provider_counts.py): the real `anthropic` and `openai` SDKs asking
a fake of the providers' count endpoints on loopback (tests/support/fake_openai_counts.py).

A count is given the request in the provider's shape; an OpenAI one is built here as the
service will build it, by the project's renderer (`render(..., "openai_responses", ...)`).
What left the process is checked as the fake received it (exactly what was given), and
against the SDKs' own param types; every failure is None and one warning without content; a
repeat is a cache hit."""

from __future__ import annotations

import json
import logging
import socket
import time
from collections.abc import AsyncIterator, Callable, Iterator
from typing import Any

import pytest
from anthropic.types import MessageCountTokensParams
from pydantic import SecretStr, TypeAdapter

from app.core.logging import EVENT_FIELDS
from app.core.settings import Settings
from app.engine.items import normalize_posted
from app.engine.render import Rendered, render
from app.engine.types import Message
from app.services.provider_counts import ProviderCount, ProviderCounter
from app.tokens.registry import ModelInfo, load_registry
from tests.support.fake_openai_counts import (
    ANTHROPIC_COUNT_PATH,
    OPENAI_COUNT_PATH,
    FakeCounts,
    body_size_count,
)
from tests.support.official_types import (
    assert_official_function_tools,
    assert_official_items,
    consumed,
)

REGISTRY = load_registry(Settings(_env_file=None))
CLAUDE: ModelInfo = REGISTRY.get("claude-sonnet-4-6")
GPT: ModelInfo = REGISTRY.get("gpt-4o-mini-2024-07-18")
ANTHROPIC_KEY = "sk-ant-test-key"
OPENAI_KEY = "sk-openai-test-key"
SECRET = "deploy with hunter2-" + "7f3a9c"
SYSTEM = "You are a careful coding assistant."

ANTHROPIC_MESSAGES: list[dict[str, Any]] = [
    {"role": "user", "content": f"Read a.py, then {SECRET}."},
    {
        "role": "assistant",
        "content": [
            {"type": "text", "text": "Reading it."},
            {"type": "tool_use", "id": "toolu_1", "name": "read_file", "input": {"path": "a.py"}},
        ],
    },
    {
        "role": "user",
        "content": [
            {"type": "tool_result", "tool_use_id": "toolu_1", "content": "print('hi')"},
            {"type": "text", "text": "What does it print?"},
        ],
    },
]
ANTHROPIC_TOOLS: list[dict[str, Any]] = [
    {
        "name": "read_file",
        "description": "Read a file of the repository.",
        "input_schema": {
            "type": "object",
            "properties": {"path": {"type": "string"}},
            "required": ["path"],
        },
    }
]

CHAT_TOOLS: list[dict[str, Any]] = [
    {
        "type": "function",
        "function": {
            "name": "read_file",
            "description": "Read a file of the repository.",
            "parameters": {
                "type": "object",
                "properties": {"path": {"type": "string"}},
                "required": ["path"],
            },
        },
    },
    {"type": "function", "function": {"name": "now", "parameters": {"type": "object"}}},
]
# A posted history in the shapes a client may mix: Chat messages and Responses items.
POSTED: list[dict[str, Any]] = [
    {
        "role": "user",
        "content": [
            {"type": "text", "text": f"Look at these, then {SECRET}."},
            {"type": "image_url", "image_url": {"url": "https://example.com/cat.png"}},
        ],
    },
    {"type": "reasoning", "id": "rs_1", "summary": []},
    {
        "type": "function_call",
        "call_id": "call_1",
        "name": "read_file",
        "arguments": '{"path": "a.py"}',
    },
    {"role": "tool", "tool_call_id": "call_1", "content": "print('hi')"},
    {"role": "assistant", "content": "It prints hi."},
    {"role": "user", "content": "Thanks."},
]


def engine_messages(posted: list[dict[str, Any]]) -> list[Message]:
    """Posted messages as the engine holds them (the count is not what is tested here)."""
    return [
        Message(
            id=str(entry.indexes[0]),
            seq=seq,
            role=entry.message.role,
            content=entry.message.content,
            tokens=0,
            name=entry.message.name,
            tool_calls=entry.message.tool_calls,
            tool_call_id=entry.message.tool_call_id,
            metadata=entry.message.metadata,
        )
        for seq, entry in enumerate(normalize_posted(posted), 1)
    ]


def responses_request(
    posted: list[dict[str, Any]], *, system: str | None, tools: list[dict[str, Any]] | None
) -> Rendered:
    """What an OpenAI count is given: the project's renderer's Responses items and tools."""
    return render(
        engine_messages(posted),
        "openai_responses",
        system_prompt=system,
        summary=None,
        placement="system",
        tools=tools,
    )


RESPONSES = responses_request(POSTED, system=SYSTEM, tools=CHAT_TOOLS)
assert RESPONSES.tools is not None

REQUESTS: dict[str, tuple[ModelInfo, list[dict[str, Any]], list[dict[str, Any]]]] = {
    "anthropic": (CLAUDE, ANTHROPIC_MESSAGES, ANTHROPIC_TOOLS),
    "openai": (GPT, RESPONSES.messages, RESPONSES.tools),
}
PROVIDERS = sorted(REQUESTS)
MakeCounter = Callable[..., ProviderCounter]
_ANTHROPIC_PARAMS = TypeAdapter(MessageCountTokensParams)


def make_settings(**overrides: Any) -> Settings:
    """Settings isolated from the environment: no keys unless given."""
    values: dict[str, Any] = {
        "anthropic_api_key": None,
        "anthropic_base_url": None,
        "openai_api_key": None,
        "openai_base_url": None,
    }
    return Settings(_env_file=None, **(values | overrides))


def keyed_settings(fake: FakeCounts) -> Settings:
    return make_settings(
        anthropic_api_key=ANTHROPIC_KEY,
        anthropic_base_url=fake.base_url,
        openai_api_key=OPENAI_KEY,
        openai_base_url=fake.openai_base_url,
    )


@pytest.fixture
def fake() -> Iterator[FakeCounts]:
    server = FakeCounts().start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
async def make_counter(fake: FakeCounts) -> AsyncIterator[MakeCounter]:
    made: list[ProviderCounter] = []

    def make(settings: Settings | None = None, **options: Any) -> ProviderCounter:
        counter = ProviderCounter(settings or keyed_settings(fake), **options)
        made.append(counter)
        return counter

    yield make
    for counter in made:
        await counter.aclose()


async def ask(
    counter: ProviderCounter,
    provider: str,
    *,
    system: str | None = SYSTEM,
    messages: list[dict[str, Any]] | None = None,
    tools: list[dict[str, Any]] | None = None,
) -> ProviderCount | None:
    model, default_messages, default_tools = REQUESTS[provider]
    return await counter.count(
        model,
        system=system,
        messages=default_messages if messages is None else messages,
        tools=default_tools if tools is None else tools,
    )


def failures(caplog: pytest.LogCaptureFixture) -> list[dict[str, Any]]:
    records = [r for r in caplog.records if r.name == "foldwise.provider_counts"]
    assert all(r.levelno == logging.WARNING for r in records)
    assert all(r.getMessage() == "provider_count_failed" for r in records)
    return [getattr(r, EVENT_FIELDS) for r in records]


def assert_no_content_logged(caplog: pytest.LogCaptureFixture) -> None:
    for record in caplog.records:
        text = record.getMessage() + json.dumps(getattr(record, EVENT_FIELDS, {}))
        assert SECRET not in text, (record.name, text[:200])
        assert "Read a" not in text and "Look at these" not in text, (record.name, text[:200])


class TestAnthropic:
    async def test_the_request_is_the_callers_and_the_count_the_providers(
        self, fake: FakeCounts, make_counter: MakeCounter
    ) -> None:
        result = await ask(make_counter(), "anthropic")

        [request] = fake.requests
        assert request.path == ANTHROPIC_COUNT_PATH
        # The key as `x-api-key`, or as a bearer token (as this SDK version sends it).
        bearer = request.headers.get("authorization", "").removeprefix("Bearer ")
        assert ANTHROPIC_KEY in (request.headers.get("x-api-key"), bearer)
        assert request.body == {
            "model": "claude-sonnet-4-6",
            "messages": ANTHROPIC_MESSAGES,
            "system": SYSTEM,
            "tools": ANTHROPIC_TOOLS,
        }
        consumed(_ANTHROPIC_PARAMS.validate_python(request.body))
        assert result == ProviderCount(body_size_count(request), "provider")

    async def test_no_system_and_no_tools_are_left_out(
        self, fake: FakeCounts, make_counter: MakeCounter
    ) -> None:
        counter = make_counter()
        result = await counter.count(CLAUDE, system=None, messages=ANTHROPIC_MESSAGES, tools=None)

        assert result is not None and result.source == "provider"
        [request] = fake.requests
        assert request.body == {"model": "claude-sonnet-4-6", "messages": ANTHROPIC_MESSAGES}
        consumed(_ANTHROPIC_PARAMS.validate_python(request.body))


class TestOpenAI:
    async def test_rendered_items_and_tools_go_as_given(
        self, fake: FakeCounts, make_counter: MakeCounter
    ) -> None:
        sent = json.loads(json.dumps(RESPONSES.messages))
        result = await make_counter().count(
            GPT, system=RESPONSES.system, messages=RESPONSES.messages, tools=RESPONSES.tools
        )

        [request] = fake.requests
        assert request.path == OPENAI_COUNT_PATH
        assert request.headers["authorization"] == f"Bearer {OPENAI_KEY}"
        assert request.body == {
            "model": "gpt-4o-mini-2024-07-18",
            "input": RESPONSES.messages,
            "instructions": SYSTEM,
            "tools": RESPONSES.tools,
        }
        assert RESPONSES.messages == sent  # not changed on the way
        assert [item.get("type") for item in request.body["input"]] == [
            "message",
            "reasoning",
            "function_call",
            "function_call_output",
            "message",
            None,  # a user message posted as a string: the easy form, as posted
        ]
        assert_official_items(request.body["input"])
        assert_official_function_tools(request.body["tools"])
        assert result == ProviderCount(body_size_count(request), "provider")

    async def test_no_system_and_no_tools_are_left_out(
        self, fake: FakeCounts, make_counter: MakeCounter
    ) -> None:
        rendered = responses_request(
            [{"role": "user", "content": "Hello"}], system=None, tools=None
        )
        assert rendered.system is None and rendered.tools is None
        result = await make_counter().count(
            GPT, system=rendered.system, messages=rendered.messages, tools=rendered.tools
        )

        assert result is not None
        [request] = fake.requests
        assert request.body == {"model": GPT.name, "input": rendered.messages}
        assert_official_items(request.body["input"])


@pytest.mark.parametrize("provider", PROVIDERS)
class TestCache:
    async def test_a_repeat_is_answered_from_memory_a_change_is_asked(
        self, fake: FakeCounts, make_counter: MakeCounter, provider: str
    ) -> None:
        counter = make_counter()
        _, messages, _ = REQUESTS[provider]
        first = await ask(counter, provider)
        assert first is not None and first.source == "provider"

        again = await ask(counter, provider, messages=json.loads(json.dumps(messages)))
        assert again == ProviderCount(first.tokens, "cache")
        assert len(fake.requests) == 1

        changed = [*messages[:-1], {"role": "user", "content": "Something else entirely."}]
        other = await ask(counter, provider, messages=changed)
        assert other is not None and other.source == "provider"
        assert len(fake.requests) == 2
        assert other.tokens == body_size_count(fake.requests[1]) != first.tokens

        await ask(counter, provider, system="Another system prompt.")  # each part is in the key
        await ask(counter, provider, tools=[])
        assert len(fake.requests) == 4
        assert (await ask(counter, provider)) == again

    async def test_least_recently_used_goes_first(
        self, fake: FakeCounts, make_counter: MakeCounter, provider: str
    ) -> None:
        counter = make_counter(cache_size=2)
        a, b, c = ([{"role": "user", "content": text}] for text in ("a", "b", "c"))
        for messages in (a, b, a, c, a, b):  # c evicts b (a was used since); then b evicts c
            await ask(counter, provider, messages=messages)
        assert [r.body.get("input", r.body.get("messages")) for r in fake.requests] == [a, b, c, b]

    async def test_a_failure_is_not_cached(
        self, fake: FakeCounts, make_counter: MakeCounter, provider: str
    ) -> None:
        fake.script = ["500"]
        counter = make_counter()
        assert await ask(counter, provider) is None
        result = await ask(counter, provider)
        assert result is not None and result.source == "provider"
        assert len(fake.requests) == 2


@pytest.mark.parametrize("provider", PROVIDERS)
class TestFailures:
    @pytest.mark.parametrize(
        ("behaviour", "reason", "status"),
        [
            ("429", "status", 429),
            ("500", "status", 500),
            ("malformed", "malformed_response", None),
            ("no_count", "malformed_response", None),
        ],
    )
    async def test_an_error_reply_is_no_count_and_one_warning(
        self,
        fake: FakeCounts,
        make_counter: MakeCounter,
        caplog: pytest.LogCaptureFixture,
        provider: str,
        behaviour: str,
        reason: str,
        status: int | None,
    ) -> None:
        fake.default = behaviour
        with caplog.at_level(logging.WARNING):
            assert await ask(make_counter(), provider) is None
        assert len(fake.requests) == 1  # no retries
        [fields] = failures(caplog)
        model = REQUESTS[provider][0]
        assert fields["provider"] == provider and fields["model"] == model.name
        assert fields["reason"] == reason
        assert fields.get("status") == status
        assert_no_content_logged(caplog)

    @pytest.mark.parametrize("behaviour", ["delay:3", "hang"])
    async def test_a_slow_provider_is_given_up_at_the_deadline(
        self,
        fake: FakeCounts,
        make_counter: MakeCounter,
        caplog: pytest.LogCaptureFixture,
        provider: str,
        behaviour: str,
    ) -> None:
        fake.default = behaviour
        counter = make_counter(deadline_s=0.3)
        started = time.monotonic()
        with caplog.at_level(logging.WARNING):
            assert await ask(counter, provider) is None
        assert 0.25 < time.monotonic() - started < 1.5
        [fields] = failures(caplog)
        assert fields["reason"] == "timeout"

    async def test_no_server_is_no_count(
        self, make_counter: MakeCounter, caplog: pytest.LogCaptureFixture, provider: str
    ) -> None:
        with socket.socket() as sock:  # a port nobody listens on once closed
            sock.bind(("127.0.0.1", 0))
            port = sock.getsockname()[1]
        closed = f"http://127.0.0.1:{port}"
        settings = make_settings(
            anthropic_api_key=ANTHROPIC_KEY,
            anthropic_base_url=closed,
            openai_api_key=OPENAI_KEY,
            openai_base_url=f"{closed}/v1",
        )
        with caplog.at_level(logging.WARNING):
            assert await ask(make_counter(settings), provider) is None
        [fields] = failures(caplog)
        assert fields["reason"] == "connection_error"


class TestAvailability:
    @pytest.mark.parametrize("key", [None, ""])
    async def test_without_a_key_nothing_is_asked(
        self, fake: FakeCounts, make_counter: MakeCounter, key: str | None
    ) -> None:
        settings = make_settings(
            anthropic_api_key=key,
            anthropic_base_url=fake.base_url,
            openai_api_key=key,
            openai_base_url=fake.openai_base_url,
        )
        counter = make_counter(settings)
        for provider in PROVIDERS:
            assert not counter.available(REQUESTS[provider][0])
            assert await ask(counter, provider) is None
        assert fake.requests == []

    async def test_each_provider_needs_its_own_key(
        self, fake: FakeCounts, make_counter: MakeCounter
    ) -> None:
        settings = make_settings(
            openai_api_key=SecretStr(OPENAI_KEY), openai_base_url=fake.openai_base_url
        )
        counter = make_counter(settings)
        assert counter.available(GPT) and not counter.available(CLAUDE)
        assert await ask(counter, "anthropic") is None
        assert await ask(counter, "openai") is not None
        assert [r.path for r in fake.requests] == [OPENAI_COUNT_PATH]

    def test_keys_come_from_the_providers_variables(self, monkeypatch: pytest.MonkeyPatch) -> None:
        monkeypatch.setenv("OPENAI_API_KEY", "sk-from-env")
        monkeypatch.setenv("OPENAI_BASE_URL", "http://gateway.invalid/v1")
        monkeypatch.setenv("FOLDWISE_EXACT_COUNTS", "true")
        settings = Settings(_env_file=None)
        assert settings.openai_api_key is not None
        assert settings.openai_api_key.get_secret_value() == "sk-from-env"
        assert settings.openai_base_url == "http://gateway.invalid/v1"
        assert settings.exact_counts is True
        assert Settings(_env_file=None, exact_counts=False).exact_counts is False


async def test_debug_logging_shows_no_content(
    fake: FakeCounts, make_counter: MakeCounter, caplog: pytest.LogCaptureFixture
) -> None:
    """The SDKs log request bodies at DEBUG: a counter holds their loggers back."""
    sdk_loggers = [logging.getLogger(name) for name in ("anthropic", "openai")]
    levels = [logger.level for logger in sdk_loggers]
    for logger in sdk_loggers:  # as in a process that never configured them
        logger.setLevel(logging.NOTSET)
    counter = make_counter()
    try:
        with caplog.at_level(logging.DEBUG):
            for provider in PROVIDERS:
                assert await ask(counter, provider) is not None
    finally:
        for logger, level in zip(sdk_loggers, levels, strict=True):
            logger.setLevel(level)
    assert len(fake.requests) == 2
    assert_no_content_logged(caplog)
