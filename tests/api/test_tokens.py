from __future__ import annotations

import httpx
import pytest

from app.tokens.counter import counter_for
from app.tokens.registry import load_registry
from tests.support.apps import make_settings
from tests.support.factories import assert_error, assistant, tool_result, tool_use, user


class TestCountTokens:
    async def test_text_uses_the_default_models_encoding(self, client: httpx.AsyncClient) -> None:
        response = await client.post("/count-tokens", json={"text": "hello"})
        assert response.status_code == 200
        body = response.json()
        info = load_registry(make_settings("sqlite://")).get("claude-sonnet-4-6")
        assert body == {
            "tokens": counter_for(info).count_text("hello"),
            "encoding": info.encoding,
            "exact": info.exact,
            "model": "claude-sonnet-4-6",
            "media": [],
            "media_rule": "claude-standard",
            "counted_by": "rules",
            "warnings": [],
        }

    @pytest.mark.parametrize(
        ("model", "encoding"),
        [("claude-opus-4-5-20251101", "cl100k_base"), ("gpt-4o-2024-08-06", "o200k_base")],
    )
    async def test_a_snapshot_id_is_echoed_as_asked(
        self, client: httpx.AsyncClient, model: str, encoding: str
    ) -> None:
        body = (await client.post("/count-tokens", json={"text": "hi", "model": model})).json()
        assert (body["model"], body["encoding"], body["warnings"]) == (model, encoding, [])

    async def test_a_newer_model_of_a_known_family_is_counted_with_a_warning(
        self, client: httpx.AsyncClient
    ) -> None:
        body = (
            await client.post("/count-tokens", json={"text": "hi", "model": "claude-sonnet-4-7"})
        ).json()
        assert body["model"] == "claude-sonnet-4-7"
        (warning,) = body["warnings"]
        assert "not in the model registry" in warning and "claude family" in warning

    async def test_openai_model_is_exact(self, client: httpx.AsyncClient) -> None:
        body = (await client.post("/count-tokens", json={"text": "hi", "model": "gpt-4o"})).json()
        assert body["exact"] is True
        assert body["encoding"] == "o200k_base"

    async def test_gemini_model_is_an_o200k_estimate(self, client: httpx.AsyncClient) -> None:
        body = (
            await client.post("/count-tokens", json={"text": "hi", "model": "gemini-2.5-flash"})
        ).json()
        gpt = (await client.post("/count-tokens", json={"text": "hi", "model": "gpt-4o"})).json()
        assert (body["exact"], body["counted_by"], body["warnings"]) == (False, "rules", [])
        assert (body["encoding"], body["media_rule"]) == ("o200k_base", "gemini-2")
        assert body["tokens"] == gpt["tokens"]  # o200k_base, but not Gemini's own tokenizer
        newer = (
            await client.post("/count-tokens", json={"text": "hi", "model": "gemini-9-ultra"})
        ).json()
        assert (newer["exact"], newer["media_rule"]) == (False, "gemini-3")
        (warning,) = newer["warnings"]
        assert "the gemini family" in warning

    async def test_messages_include_per_message_overhead(self, client: httpx.AsyncClient) -> None:
        text = (await client.post("/count-tokens", json={"text": "hello"})).json()["tokens"]
        messages = (await client.post("/count-tokens", json={"messages": [user("hello")]})).json()[
            "tokens"
        ]
        assert messages > text

    async def test_matches_the_stored_token_counts(self, client: httpx.AsyncClient) -> None:
        batch = [user("Fix it"), tool_use("t1", path="a.py"), tool_result("t1", "x = 1\n" * 40)]
        counted = (await client.post("/count-tokens", json={"messages": batch})).json()["tokens"]
        await client.post("/sessions", json={"id": "cmp"})
        appended = (await client.post("/sessions/cmp/messages", json={"messages": batch})).json()[
            "messages"
        ]
        assert counted == sum(m["token_count"] for m in appended)

    async def test_tools_add_tokens(self, client: httpx.AsyncClient) -> None:
        tool = {"name": "grep", "description": "Search files", "input_schema": {"type": "object"}}
        bare = (await client.post("/count-tokens", json={"messages": [user("x")]})).json()
        with_tools = (
            await client.post("/count-tokens", json={"messages": [user("x")], "tools": [tool]})
        ).json()
        assert with_tools["tokens"] > bare["tokens"]
        alone = (await client.post("/count-tokens", json={"tools": [tool]})).json()
        assert alone["tokens"] == with_tools["tokens"] - bare["tokens"]

    async def test_needs_exactly_one_input(self, client: httpx.AsyncClient) -> None:
        assert_error(await client.post("/count-tokens", json={}), 422, "validation_error")
        both = {"text": "a", "messages": [user("b")]}
        assert_error(await client.post("/count-tokens", json=both), 422, "validation_error")
        text_and_tools = {"text": "a", "tools": [{"name": "t", "input_schema": {}}]}
        assert_error(
            await client.post("/count-tokens", json=text_and_tools), 422, "validation_error"
        )

    async def test_bad_message_and_unknown_model(self, client: httpx.AsyncClient) -> None:
        bad = {"messages": [{"role": "user"}]}
        assert_error(await client.post("/count-tokens", json=bad), 422, "invalid_message")
        unknown = {"text": "a", "model": "nope"}
        assert_error(await client.post("/count-tokens", json=unknown), 422, "unknown_model")
        typo = assert_error(
            await client.post("/count-tokens", json={"text": "a", "model": "gpt-40"}),
            422,
            "unknown_model",
        )
        assert "did you mean" in typo["message"] and "gpt-4o" in typo["details"]["suggestions"]
        assert all(name.startswith("gpt-") for name in typo["details"]["suggestions"])


class TestModels:
    async def test_lists_the_registry(self, client: httpx.AsyncClient) -> None:
        response = await client.get("/models")
        assert response.status_code == 200
        models = response.json()["models"]
        names = {m["name"] for m in models}
        assert {"claude-sonnet-4-5", "gpt-4o"} <= names
        for model in models:
            assert set(model) == {
                "name", "provider", "context_window", "max_output_tokens", "encoding", "exact",
                "media", "retires", "deprecated",
            }  # fmt: skip
            assert model["context_window"] >= model["max_output_tokens"] > 0
            assert model["deprecated"] is (model["retires"] is not None)
        by_name = {m["name"]: m for m in models}
        assert by_name["claude-sonnet-4-5"]["retires"] == "2026-11-30"
        assert by_name["claude-sonnet-4-6"]["deprecated"] is False
        assert by_name["gemini-2.5-flash"] == {
            "name": "gemini-2.5-flash", "provider": "gemini", "context_window": 1_048_576,
            "max_output_tokens": 65_536, "encoding": "o200k_base", "exact": False,
            "media": "gemini-2", "retires": "2026-12-01", "deprecated": True,
        }  # fmt: skip
        assert by_name["gemini-3-flash-preview"]["media"] == "gemini-3"
        assert {m["provider"] for m in models} == {"anthropic", "openai", "gemini"}


class TestOneCountingRule:
    """`POST /count-tokens` gives exactly the numbers the context's `usage` reports."""

    async def _count(self, client: httpx.AsyncClient, **body: object) -> int:
        response = await client.post("/count-tokens", json=body)
        assert response.status_code == 200, response.text
        tokens: int = response.json()["tokens"]
        return tokens

    @pytest.mark.parametrize("fmt", ["anthropic", "openai"])
    async def test_tools_messages_and_system_match_usage(
        self, client: httpx.AsyncClient, fmt: str
    ) -> None:
        schema = {"type": "object", "properties": {"pattern": {"type": "string"}}}
        if fmt == "anthropic":
            tools = [{"name": "grep", "description": "Search files", "input_schema": schema}]
        else:
            function = {"name": "grep", "description": "Search files", "parameters": schema}
            tools = [{"type": "function", "function": function}]
        system = "You are a careful coding assistant."
        batch = [user("Fix it"), tool_use("t1", path="a.py"), tool_result("t1", "x = 1\n" * 40)]
        batch.append(assistant("Done: the test passes now."))
        await client.post("/sessions", json={"id": "same", "system_prompt": system, "tools": tools})
        await client.post("/sessions/same/messages", json={"messages": batch})
        response = await client.get("/sessions/same/context", params={"format": fmt})
        assert response.status_code == 200, response.text
        usage = response.json()["usage"]

        only_tools = await self._count(client, messages=[], tools=tools)
        assert usage["tools_tokens"] == only_tools
        assert usage["message_tokens"] == await self._count(client, messages=batch)
        if fmt == "anthropic":  # a top-level system string
            assert usage["system_tokens"] == await self._count(client, text=system)
        else:  # a system message
            as_message = [{"role": "system", "content": system}]
            assert usage["system_tokens"] == await self._count(client, messages=as_message)


class TestFamilyModels:
    async def test_a_session_of_a_newer_model_is_served_under_its_id_with_a_warning(
        self, client: httpx.AsyncClient
    ) -> None:
        created = await client.post("/sessions", json={"id": "new", "model": "claude-sonnet-4-7"})
        assert created.status_code == 201 and created.json()["model"] == "claude-sonnet-4-7"
        await client.post("/sessions/new/messages", json={"messages": [user("hello")]})
        body = (await client.get("/sessions/new/context")).json()
        assert body["model"] == "claude-sonnet-4-7"
        assert body["usage"]["context_window"] == 200_000
        assert any("claude-sonnet-4-7" in w and "claude family" in w for w in body["warnings"])
        known = (await client.get("/sessions/new/context", params={"model": "gpt-4o"})).json()
        assert known["model"] == "gpt-4o" and not known["warnings"]

    async def test_assemble_context_warns_too(self, client: httpx.AsyncClient) -> None:
        body = {"messages": [user("hi")], "model": "gpt-5.5-pro"}
        response = await client.post("/assemble-context", json=body)
        assert response.status_code == 200, response.text
        assert response.json()["model"] == "gpt-5.5-pro"
        (warning,) = response.json()["warnings"]
        assert "gpt-5 family" in warning
