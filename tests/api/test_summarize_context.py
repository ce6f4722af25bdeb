"""POST /summarize-context: shapes, strategies, fallbacks and the database cache."""

from __future__ import annotations

from typing import Any

import httpx

from tests.support.apps import MakeClient
from tests.support.factories import assert_error
from tests.support.fake_anthropic import FakeAnthropic
from tests.support.fake_openai import FakeOpenAI

TRANSCRIPT: list[dict[str, Any]] = [
    {"role": "user", "content": "Fix the failing test. Never edit tests/fixtures/."},
    {
        "role": "assistant",
        "content": [
            {"type": "text", "text": "Reading it."},
            {
                "type": "tool_use",
                "id": "tu_1",
                "name": "read_file",
                "input": {"path": "tests/test_api.py"},
            },
        ],
    },
    {
        "role": "user",
        "content": [{"type": "tool_result", "tool_use_id": "tu_1", "content": "def test(): ..."}],
    },
    {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {
                "id": "c1",
                "type": "function",
                "function": {"name": "bash", "arguments": '{"command": "pytest -q"}'},
            }
        ],
    },
    {"role": "tool", "tool_call_id": "c1", "content": "E   ValueError: bad port\nexit code: 1"},
]


async def post(client: httpx.AsyncClient, **body: Any) -> httpx.Response:
    return await client.post("/summarize-context", json={"messages": TRANSCRIPT, **body})


class TestRuleWithoutKey:
    async def test_auto_without_key_uses_rule_and_says_why(self, client: httpx.AsyncClient) -> None:
        response = await post(client, max_summary_tokens=200)
        assert response.status_code == 200
        body = response.json()
        assert body["strategy"] == "rule"
        assert body["fallback"] == "no ANTHROPIC_API_KEY configured"
        assert body["input_messages"] == 5
        assert body["input_tokens"] > 0
        assert body["cached"] is False
        assert "Files read:\n- `tests/test_api.py`" in body["summary"]
        assert "`E   ValueError: bad port`" in body["summary"]
        assert 0 < body["summary_tokens"] <= 200

    async def test_explicit_rule_has_no_fallback_note(self, client: httpx.AsyncClient) -> None:
        body = (await post(client, strategy="rule")).json()
        assert (body["strategy"], body["fallback"]) == ("rule", None)

    async def test_previous_summary_is_folded_in(self, client: httpx.AsyncClient) -> None:
        previous = "User constraints:\n- Always keep the CLI flags stable."
        body = (await post(client, strategy="rule", previous_summary=previous)).json()
        assert "- Always keep the CLI flags stable." in body["summary"]
        assert "- Never edit tests/fixtures/." in body["summary"]


class TestValidation:
    async def test_bad_message_is_422_with_its_path(self, client: httpx.AsyncClient) -> None:
        response = await client.post(
            "/summarize-context", json={"messages": [{"role": "robot", "content": "x"}]}
        )
        assert response.status_code == 422
        assert response.json()["error"]["code"] == "invalid_message"

    async def test_unknown_strategy_is_422(self, client: httpx.AsyncClient) -> None:
        response = await post(client, strategy="magic")
        assert_error(response, 422, "validation_error")

    async def test_needs_a_key_when_keys_are_configured(self, make_client: MakeClient) -> None:
        client = await make_client(api_keys="tenant-a:secret-key")
        assert_error(await post(client), 401, "unauthorized")
        authorized = await client.post(
            "/summarize-context",
            json={"messages": TRANSCRIPT},
            headers={"Authorization": "Bearer secret-key"},
        )
        assert authorized.status_code == 200


class TestWithLlm:
    async def test_llm_result_is_cached_in_the_database(self, make_client: MakeClient) -> None:
        fake = FakeAnthropic().start()
        try:
            fake.reply = lambda request: "Errors & solutions: `E   ValueError: bad port` is open."
            client = await make_client(
                anthropic_api_key="sk-test", anthropic_base_url=fake.base_url
            )
            first = (await post(client, strategy="llm")).json()
            second = (await post(client, strategy="llm")).json()
        finally:
            fake.stop()
        assert (first["strategy"], first["fallback"], first["cached"]) == ("llm", None, False)
        assert second["cached"] is True
        assert second["summary"] == first["summary"]
        assert len(fake.requests) == 1

    async def test_llm_failure_falls_back_with_reason(self, make_client: MakeClient) -> None:
        fake = FakeAnthropic(default="529").start()
        try:
            client = await make_client(
                anthropic_api_key="sk-test",
                anthropic_base_url=fake.base_url,
                summary_max_retries=0,
                summary_timeout_s=2.0,
            )
            body = (await post(client, strategy="hybrid")).json()
        finally:
            fake.stop()
        assert body["strategy"] == "rule"
        assert body["fallback"] == "anthropic 529 overloaded_error"
        assert "`pytest -q` → exit 1" in body["summary"]

    async def test_a_chosen_provider_answers_and_its_usage_is_reported(
        self, make_client: MakeClient
    ) -> None:
        fake = FakeOpenAI(reply=lambda request: "Task progress: done.", cached_tokens=7).start()
        try:
            client = await make_client(
                openai_api_key="sk-test",
                openai_base_url=fake.openai_base_url,
                summarizer_models=["openai:gpt-5-mini"],
            )
            body = (await post(client, strategy="llm", summarizer="openai:gpt-5-mini")).json()
            refused = await post(client, strategy="llm", summarizer="gemini:gemini-2.5-pro")
        finally:
            fake.stop()
        assert (body["strategy"], body["model"], body["summary"]) == (
            "llm", "gpt-5-mini", "Task progress: done."
        )  # fmt: skip
        assert body["usage"]["prompt"] == "fresh" and body["usage"]["cache_read_tokens"] == 7
        assert (fake.requests[0].path, fake.requests[0].body["model"]) == (
            "/v1/responses", "gpt-5-mini"
        )  # fmt: skip
        assert_error(refused, 422, "summarizer_not_allowed")
        assert len(fake.requests) == 1
