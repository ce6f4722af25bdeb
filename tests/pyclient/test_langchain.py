"""The LangChain chat history and the LangGraph hooks, driven by the real libraries with a
scripted chat model, against a real server."""

from __future__ import annotations

import pytest
from foldwise_client import AsyncFoldwise, Foldwise
from foldwise_client.langchain import FoldwiseChatMessageHistory, FoldwiseHook
from langchain_core.messages import (
    AIMessage,
    HumanMessage,
    SystemMessage,
    ToolMessage,
)
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.prebuilt import create_react_agent

from tests.pyclient.conftest import new_id
from tests.pyclient.fake_chat_model import (
    ScriptedChatModel,
    folding,
    get_weather,
    six_weather_turns,
)
from tests.support.servers import Server

pytestmark = pytest.mark.filterwarnings(
    "ignore:create_react_agent has been moved:DeprecationWarning"
)


def exchange(call_id: str) -> list[HumanMessage | AIMessage | ToolMessage]:
    return [
        HumanMessage("What is the weather?", id=new_id("h")),
        AIMessage(
            "", tool_calls=[{"name": "get_weather", "args": {"city": "Paris"}, "id": call_id}]
        ),
        ToolMessage("sunny", tool_call_id=call_id, id=new_id("t")),
        AIMessage("It is sunny.", id=new_id("a")),
    ]


def test_history_round_trip(server: Server) -> None:
    client = Foldwise(server.base_url)
    sid = new_id("hist")
    history = FoldwiseChatMessageHistory(
        sid, client=client, session_options={"system_prompt": "Be brief."}
    )
    assert history.messages == [], "a session that does not exist yet has no messages"

    call_id = new_id("call")
    posted = exchange(call_id)
    history.add_messages(posted)
    history.add_messages(posted[:1])  # the same message again: stored once
    assert client.get_session(sid)["message_count"] == 4

    got = history.messages
    assert isinstance(got[0], SystemMessage) and got[0].content == "Be brief."
    human, ai, result, answer = got[1:]
    assert isinstance(human, HumanMessage) and human.content == "What is the weather?"
    assert isinstance(ai, AIMessage) and ai.tool_calls[0]["id"] == call_id
    assert ai.tool_calls[0]["args"] == {"city": "Paris"}
    assert isinstance(result, ToolMessage) and result.tool_call_id == call_id
    assert isinstance(answer, AIMessage) and answer.content == "It is sunny."

    history.clear()
    assert [type(m) for m in history.messages] == [SystemMessage]
    history.add_user_message("fresh start")
    assert [m.content for m in history.messages[1:]] == ["fresh start"]
    assert client.get_session(sid)["message_count"] == 5, "clear keeps stored messages"


async def test_history_async_folds_to_the_budget(server: Server) -> None:
    client = AsyncFoldwise(server.base_url)
    sid = new_id("ahist")
    history = FoldwiseChatMessageHistory(
        sid,
        async_client=client,
        session_options={"system_prompt": "Be brief.", "settings": {"keep_recent": 2}},
        context_options={"max_tokens": 600},
    )
    for i in range(12):
        await history.aadd_messages(
            [HumanMessage(f"question {i} " + "word " * 60), AIMessage(f"answer {i} " + "x " * 60)]
        )
    got = await history.aget_messages()
    assert isinstance(got[0], SystemMessage) and "Be brief." in str(got[0].content)
    assert "question" in str(got[0].content), "the summary of folded messages rides along"
    assert len(got) < 24 and str(got[-1].content).startswith("answer 11")
    await history.aclear()
    assert [type(m) for m in await history.aget_messages()] == [SystemMessage]
    await client.close()


def test_react_agent_gets_the_context_and_stores_every_message(server: Server) -> None:
    client = Foldwise(server.base_url)
    sid = new_id("graph")
    hook = FoldwiseHook(**folding(client, "You are a weather bot."))
    model = ScriptedChatModel()
    agent = create_react_agent(
        model,
        [get_weather],
        pre_model_hook=hook.pre_model_hook,
        post_model_hook=hook.post_model_hook,
        checkpointer=InMemorySaver(),
    )
    sent = six_weather_turns(agent, client, sid, model)
    assert "You are a weather bot." in str(sent[0].content)
    assert "weather" in str(sent[0].content).split("You are a weather bot.", 1)[1], "summary"


async def test_react_agent_async_with_a_fixed_session(server: Server) -> None:
    client = AsyncFoldwise(server.base_url)
    sid = new_id("agraph")
    hook = FoldwiseHook(sid, async_client=client)
    model = ScriptedChatModel()
    agent = create_react_agent(
        model,
        [get_weather],
        pre_model_hook=hook.pre_model_hook,
        post_model_hook=hook.post_model_hook,
    )
    state = await agent.ainvoke({"messages": [HumanMessage("Weather please?")]})
    assert "sunny in Paris" in str(state["messages"][-1].content)
    stored = [m async for m in client.iter_messages(sid)]
    assert [m["role"] for m in stored] == ["user", "assistant", "tool", "assistant"]
    assert len(model.seen) == 2 and len(model.seen[1]) == 3
    await client.close()


def test_hook_without_a_session_refuses() -> None:
    hook = FoldwiseHook(client=Foldwise("http://127.0.0.1:9"))
    with pytest.raises(ValueError, match="thread_id"):
        hook.pre_model_hook.invoke({"messages": [HumanMessage("hi")]})


def test_history_stores_an_id_less_message_said_twice_twice(server: Server) -> None:
    client = Foldwise(server.base_url)
    sid = new_id("twice")
    history = FoldwiseChatMessageHistory(sid, client=client)
    history.add_user_message("yes")
    history.add_user_message("yes")
    assert [m.content for m in history.messages] == ["yes", "yes"]


def test_hook_stores_id_less_state_messages_once(server: Server) -> None:
    client = Foldwise(server.base_url)
    sid = new_id("noid")
    hook = FoldwiseHook(sid, client=client)
    state = {"messages": [HumanMessage("hello"), AIMessage("hi"), HumanMessage("hello")]}
    first = hook.pre_model_hook.invoke(state)
    again = FoldwiseHook(sid, client=client)  # a new process: nothing remembered
    second = again.pre_model_hook.invoke(state)
    assert [m.content for m in first["llm_input_messages"]] == ["hello", "hi", "hello"]
    assert second == first
    assert client.get_session(sid)["message_count"] == 3


@pytest.mark.parametrize("size", [1000, 1001])
async def test_hook_stores_a_long_state_in_batches_then_takes_the_turn(
    server: Server, size: int
) -> None:
    """The last batch (at most MAX_BATCH messages) goes with the context read (POST …/turn),
    the ones before it are plain appends; sync and async hooks agree."""
    client, async_client = Foldwise(server.base_url), AsyncFoldwise(server.base_url)
    state = {"messages": [HumanMessage(f"m{i}", id=f"m{i}") for i in range(size)]}
    for name in ("sync", "async"):
        sid = new_id(f"long-{name}")
        hook = FoldwiseHook(sid, client=client, async_client=async_client)
        if name == "sync":
            served = hook.pre_model_hook.invoke(state)
        else:
            served = await hook.pre_model_hook.ainvoke(state)
        assert served["llm_input_messages"][-1].content == f"m{size - 1}"
        assert client.get_session(sid)["message_count"] == size
    await async_client.close()
