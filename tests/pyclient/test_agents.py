"""`FoldwiseSession` under the OpenAI Agents SDK: the Session protocol against a real server,
and `Runner.run` with the SDK's own Responses model talking to a fake Responses API."""

from __future__ import annotations

from typing import Any, cast

import pytest
from agents import Agent, Runner, function_tool, set_tracing_disabled
from agents.items import TResponseInputItem
from agents.memory import Session
from agents.models.openai_responses import OpenAIResponsesModel
from foldwise_client import AsyncFoldwise, ConflictError
from foldwise_client.agents import FoldwiseSession
from openai import AsyncOpenAI

from tests.pyclient.conftest import new_id
from tests.pyclient.fake_providers import FakeProviders
from tests.support.servers import Server

set_tracing_disabled(True)


@function_tool
def get_weather(city: str) -> str:
    """The weather in a city."""
    return f"sunny in {city}"


def weather_agent(providers: FakeProviders, model: str) -> Agent[Any]:
    """An agent with the weather tool on the SDK's Responses model, against the fake API."""
    openai_client = AsyncOpenAI(base_url=providers.base_url + "/v1", api_key="test")
    return Agent(
        name="Weather",
        instructions="You answer weather questions.",
        tools=[get_weather],
        model=OpenAIResponsesModel(model=model, openai_client=openai_client),
    )


def user(text: str) -> dict[str, Any]:
    return {"role": "user", "content": text}


def items(*raw: dict[str, Any]) -> list[TResponseInputItem]:
    """Responses items as the SDK passes them (plain dicts typed as its TypedDicts)."""
    return cast(list[TResponseInputItem], list(raw))


async def got(session: FoldwiseSession, limit: int | None = None) -> list[dict[str, Any]]:
    return cast(list[dict[str, Any]], await session.get_items(limit))


async def pop(session: FoldwiseSession) -> dict[str, Any] | None:
    return cast(dict[str, Any] | None, await session.pop_item())


def assistant_turn(call_id: str) -> list[dict[str, Any]]:
    return [
        {"type": "reasoning", "id": new_id("rs"), "summary": []},
        {
            "type": "message",
            "id": new_id("msg"),
            "role": "assistant",
            "status": "completed",
            "content": [{"type": "output_text", "text": "Checking.", "annotations": []}],
        },
        {
            "type": "function_call",
            "id": new_id("fc"),
            "call_id": call_id,
            "name": "get_weather",
            "arguments": '{"city": "Paris"}',
            "status": "completed",
        },
    ]


async def test_session_protocol(server: Server) -> None:
    client = AsyncFoldwise(server.base_url)
    session = FoldwiseSession(
        new_id("agents"), client=client, session_options={"system_prompt": "Sys."}
    )
    assert isinstance(session, Session)
    assert await got(session) == []
    assert await pop(session) is None

    call_id = new_id("call")
    await session.add_items(items(user("Weather?")))  # creates the session
    await session.add_items(
        items(
            *assistant_turn(call_id),
            {"type": "function_call_output", "call_id": call_id, "output": "sunny"},
        )
    )
    stored_items = await got(session)
    assert stored_items[0] == {"type": "message", "role": "system", "content": "Sys."}
    assert stored_items[1] == {"role": "user", "content": "Weather?"}  # as it was added
    assert [i.get("type") for i in stored_items[2:]] == [
        "reasoning",
        "message",
        "function_call",
        "function_call_output",
    ]
    assert stored_items[-1]["output"] == "sunny" and stored_items[-2]["call_id"] == call_id
    assert await got(session, limit=2) == stored_items[-2:]
    stored = [m async for m in client.iter_messages(session.session_id)]
    assert [m["role"] for m in stored] == ["user", "assistant", "tool"], "one assistant turn"

    output = await pop(session)
    assert output is not None and output["type"] == "function_call_output"
    call = await pop(session)
    assert call is not None and call["type"] == "function_call" and call["call_id"] == call_id
    after = await got(session)
    assert [i.get("type") for i in after[1:]] == [None, "reasoning", "message"]
    assert len(after) == len(stored_items) - 2, "each pop removes exactly one item"

    await session.clear_session()
    assert await got(session) == [stored_items[0]], "only the system prompt is left"
    await client.close()


async def test_runner_with_a_foldwise_session(server: Server, providers: FakeProviders) -> None:
    client = AsyncFoldwise(server.base_url)
    agent = weather_agent(providers, "gpt-4o")
    sid = new_id("runner")
    session = FoldwiseSession(
        sid,
        client=client,
        session_options={"model": "gpt-4o", "settings": {"keep_recent": 4}},
        context_options={"max_tokens": 700},
    )
    first = len(providers.requests["responses"])
    for turn in range(6):
        question = f"What is the weather, take {turn}? " + "context " * 100
        result = await Runner.run(agent, question, session=session)
        assert result.final_output == "The tool says: sunny in Paris"

    sent = providers.requests["responses"][first:]
    assert len(sent) == 12, "a tool call and an answer per turn"
    assert all(r["instructions"] == "You answer weather questions." for r in sent)
    last_input = sent[-1]["input"]
    assert last_input[-1]["type"] == "function_call_output"
    assert last_input[-2]["type"] == "function_call"
    assert last_input[-1]["call_id"] == last_input[-2]["call_id"]
    stored = [m async for m in client.iter_messages(sid)]
    assert len(stored) == 6 * 4, "question, call, output, answer: each stored once"
    assert (await client.get_session(sid))["summary"] is not None, "the session folded"
    summary = last_input[0]["content"][0]["text"]
    assert summary.startswith("[Summary of earlier conversation]"), "the summary leads the input"
    assert last_input[1]["role"] == "assistant"
    assert len(last_input) < 6 * 4
    await client.close()


async def test_pop_item_splits_a_turn_of_two_calls(server: Server) -> None:
    client = AsyncFoldwise(server.base_url)
    session = FoldwiseSession(new_id("two-calls"), client=client)
    first, second = new_id("call"), new_id("call")
    await session.add_items(
        items(
            user("Do two things."),
            {"type": "function_call", "call_id": first, "name": "a", "arguments": "{}"},
            {"type": "function_call", "call_id": second, "name": "b", "arguments": "{}"},
        )
    )
    popped = [await pop(session) for _ in range(4)]
    assert [p["call_id"] if p else None for p in popped[:2]] == [second, first]
    assert popped[2] is not None and popped[2]["role"] == "user"
    assert popped[3] is None and await got(session) == []
    await client.close()


async def test_pop_item_stops_at_the_summary_of_a_folded_session(server: Server) -> None:
    client = AsyncFoldwise(server.base_url)
    session = FoldwiseSession(
        new_id("folded"), client=client, session_options={"settings": {"keep_recent": 1}}
    )
    await session.add_items(items(user("one " * 50)))
    await session.add_items(items({"role": "assistant", "content": "two " * 50}))
    await session.add_items(items(user("three")))
    assert (await client.summarize(session.session_id))["folded"]
    before = await got(session)
    assert before[0]["content"][0]["text"].startswith("[Summary of earlier conversation]")
    newest = await pop(session)
    assert newest == {"role": "user", "content": "three"}  # as it was added
    assert await got(session) == before[:-1]
    with pytest.raises(ConflictError) as caught:
        await session.pop_item()
    assert caught.value.code == "message_summarized", "the summary already holds it"
    assert await got(session) == before[:-1]
    await client.close()


class RecordingFoldwise(AsyncFoldwise):
    """A real client that also records its usage reports."""

    def __init__(self, base_url: str) -> None:
        super().__init__(base_url)
        self.reports: list[tuple[int, Any]] = []

    async def report_usage(self, session_id: str, input_tokens: int, **options: Any) -> Any:
        result = await super().report_usage(session_id, input_tokens, **options)
        self.reports.append((input_tokens, options["unserved"]))
        return result


async def test_usage_hooks_report_each_call_with_what_was_not_served(
    server: Server, providers: FakeProviders
) -> None:
    client = RecordingFoldwise(server.base_url)
    agent = weather_agent(providers, "gpt-4")
    # gpt-4: a model family (cl100k_base) the other Agents tests on this server do not use.
    session = FoldwiseSession(new_id("usage"), client=client, session_options={"model": "gpt-4"})
    await Runner.run(agent, "Weather in Paris?", session=session, hooks=session.usage_hooks())
    await Runner.run(agent, "Thanks!", session=session, hooks=session.usage_hooks())

    assert [tokens for tokens, _ in client.reports] == [100, 100, 100], "one per model call"
    first, _, second_run = (unserved for _, unserved in client.reports)
    assert first["system"] == "You answer weather questions."
    assert [t["name"] for t in first["tools"]] == ["get_weather"]
    assert [m.get("content") for m in first["messages"]] == ["Weather in Paris?"]
    assert [m.get("content") for m in second_run["messages"]] == ["Thanks!"], (
        "the history came from Foldwise: only the new input was not served"
    )
    calibration = (await client.context(session.session_id, model="gpt-4")).usage["calibration"]
    assert calibration["family"] == "cl100k_base" and calibration["samples"] >= 3
    await client.close()
