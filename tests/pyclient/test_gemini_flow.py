"""A Gemini user's agent loop through Foldwise: the official `google-genai` SDK against a fake
generateContent on loopback that, like Gemini 3, refuses a function call sent back without its
`thoughtSignature`. What the SDK returns is posted as it is; what Foldwise serves is sent."""

from __future__ import annotations

from typing import Any

import pytest
from foldwise_client import Foldwise
from google import genai
from google.genai import types

from tests.pyclient.conftest import new_id
from tests.pyclient.fake_providers import FakeProviders, signature_bytes, signed
from tests.support.official_types import assert_official_gemini
from tests.support.servers import Server

WEATHER = {
    "functionDeclarations": [
        {
            "name": "get_weather",
            "description": "The weather in a city.",
            "parameters": {"type": "OBJECT", "properties": {"city": {"type": "STRING"}}},
        }
    ]
}


def posted(content: types.Content | None) -> dict[str, Any]:
    """A reply's content as a client posts it: the SDK's own JSON dump (snake_case)."""
    assert content is not None
    return content.model_dump(mode="json", exclude_none=True)


def turn(fw: Foldwise, gemini: genai.Client, session_id: str, text: str) -> str:
    fw.append_messages(session_id, [{"role": "user", "parts": [{"text": text}]}])
    while True:
        context = fw.context(session_id, format="gemini")
        kwargs = context.gemini_kwargs()
        assert_official_gemini(
            kwargs["contents"],
            kwargs.get("config", {}).get("system_instruction"),
            kwargs.get("config", {}).get("tools"),
        )
        reply = gemini.models.generate_content(**kwargs)
        assert reply.candidates
        fw.append_messages(session_id, [posted(reply.candidates[0].content)])
        if not reply.function_calls:
            return reply.text or ""
        answers = [
            {"functionResponse": {"name": call.name, "response": {"output": "sunny, 21C"}}}
            for call in reply.function_calls
        ]
        fw.append_messages(session_id, [{"role": "user", "parts": answers}])


def test_a_gemini_agent_with_tools_runs_several_turns(
    server: Server, providers: FakeProviders
) -> None:
    fw = Foldwise(server.base_url)
    session_id = new_id("gemini")
    fw.create_session(
        session_id, model="gemini-3-flash-preview", system_prompt="Be brief.", tools=[WEATHER]
    )
    gemini = genai.Client(
        api_key="test-key", http_options=types.HttpOptions(base_url=providers.base_url)
    )
    assert turn(fw, gemini, session_id, "Hello") == "Noted: Hello"
    assert turn(fw, gemini, session_id, "What is the weather in Paris?") == (
        "The tool says: sunny, 21C"
    )
    assert turn(fw, gemini, session_id, "Thanks") == "Noted: Thanks"

    sent = providers.requests["gemini"][-1]
    assert sent["systemInstruction"]["parts"][0]["text"] == "Be brief."
    assert sent["tools"][0]["functionDeclarations"][0]["name"] == "get_weather"
    call = next(p for c in sent["contents"] for p in c["parts"] if "functionCall" in p)
    assert signed(call) == signature_bytes(providers.signatures["get_weather"])
    assert [c["role"] for c in sent["contents"]] == ["user", "model"] * 2 + ["user", "model"] + [
        "user"
    ]
    # The same stored turn, read as another provider's request, pairs the call and its result.
    chat = fw.context(session_id, format="openai").messages
    call_id = next(m for m in chat if m.get("tool_calls"))["tool_calls"][0]["id"]
    assert any(m.get("tool_call_id") == call_id for m in chat)


def test_the_fake_refuses_a_call_without_its_signature(providers: FakeProviders) -> None:
    """The fake's own control: the rule the test above relies on is enforced."""
    gemini = genai.Client(
        api_key="test-key", http_options=types.HttpOptions(base_url=providers.base_url)
    )
    providers.signatures["get_weather"] = "+/+/c2lnbmVk"
    unsigned: Any = [
        {"role": "user", "parts": [{"text": "weather?"}]},
        {"role": "model", "parts": [{"functionCall": {"name": "get_weather", "args": {}}}]},
        {
            "role": "user",
            "parts": [{"functionResponse": {"name": "get_weather", "response": {"output": "x"}}}],
        },
    ]
    with pytest.raises(genai.errors.ClientError) as refused:
        gemini.models.generate_content(model="gemini-3-flash-preview", contents=unsigned)
    assert refused.value.code == 400 and "thought_signature" in str(refused.value)
