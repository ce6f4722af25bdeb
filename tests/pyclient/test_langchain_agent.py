"""`FoldwiseMiddleware` in LangChain 1.x `create_agent`, sync and async, with a scripted chat
model against a real server; and the LangChain adapters' async calls using the server of the
sync client they were given."""

from __future__ import annotations

from typing import Any

from foldwise_client import AsyncFoldwise, Foldwise
from foldwise_client.langchain import FoldwiseChatMessageHistory
from foldwise_client.langchain_agent import FoldwiseMiddleware
from langchain.agents import create_agent
from langchain_core.messages import HumanMessage, SystemMessage
from langgraph.checkpoint.memory import InMemorySaver

from tests.pyclient.conftest import new_id
from tests.pyclient.fake_chat_model import (
    ScriptedChatModel,
    folding,
    get_weather,
    six_weather_turns,
)
from tests.support.servers import Server


def test_create_agent_gets_the_folded_context_and_stores_every_message(server: Server) -> None:
    client = Foldwise(server.base_url)
    sid = new_id("lc-agent")
    model = ScriptedChatModel()
    middleware = [FoldwiseMiddleware(**folding(client, "Session rules."))]
    agent = create_agent(
        model, [get_weather], system_prompt="You are a weather bot.", middleware=middleware,
        checkpointer=InMemorySaver(),
    )  # fmt: skip
    sent = six_weather_turns(agent, client, sid, model)
    system = str(sent[0].content)
    assert system.startswith("You are a weather bot.\n\nSession rules."), "the agent's first"
    assert "weather" in system.split("Session rules.", 1)[1], "then the summary"
    assert not any(isinstance(m, SystemMessage) for m in sent[1:])
    client.close()


async def test_create_agent_async_with_a_fixed_session(server: Server) -> None:
    client = AsyncFoldwise(server.base_url)
    sid = new_id("lc-async")
    model = ScriptedChatModel()
    agent = create_agent(
        model, [get_weather], middleware=[FoldwiseMiddleware(sid, async_client=client)]
    )
    state = await agent.ainvoke({"messages": [HumanMessage("Weather please?")]})
    assert "sunny in Paris" in str(state["messages"][-1].content)
    stored = [m async for m in client.iter_messages(sid)]
    assert [m["role"] for m in stored] == ["user", "assistant", "tool", "assistant"]
    assert len(model.seen) == 2 and len(model.seen[1]) == 3, "no system message: none set"
    await client.close()


async def test_async_calls_use_the_server_of_the_sync_client(server: Server) -> None:
    sid = new_id("lc-twin")
    client = Foldwise(server.base_url)
    history = FoldwiseChatMessageHistory(sid, client=client)
    await history.aadd_messages([HumanMessage("hello", id=new_id("h"))])
    assert [m.content for m in await history.aget_messages()] == ["hello"]
    assert client.get_session(sid)["message_count"] == 1, "stored on client='s server"
    client.close()


class RecordingFoldwise(Foldwise):
    """A real client that also records its usage reports."""

    def __init__(self, base_url: str) -> None:
        super().__init__(base_url)
        self.reports: list[tuple[int, Any]] = []

    def report_usage(self, session_id: str, input_tokens: int, **options: Any) -> Any:
        result = super().report_usage(session_id, input_tokens, **options)
        self.reports.append((input_tokens, options["unserved"]))
        return result


def test_create_agent_reports_usage_with_what_was_not_served(server: Server) -> None:
    client = RecordingFoldwise(server.base_url)
    sid = new_id("lc-usage")
    # A model family no other test of this shared server uses: the ratio it learns is its own.
    middleware = FoldwiseMiddleware(sid, client=client, session_options={"model": "gpt-3.5-turbo"})
    model = ScriptedChatModel(input_tokens=400)
    agent = create_agent(
        model,
        [get_weather],
        system_prompt="Be brief.",
        middleware=[middleware],
    )
    agent.invoke({"messages": [HumanMessage("Weather please?")]})
    assert len(client.reports) == len(model.seen) == 2, "one report per model call"
    tokens, unserved = client.reports[-1]
    assert tokens == 400 and unserved["system"] == "Be brief."
    assert [t["function"]["name"] for t in unserved["tools"]] == ["get_weather"]
    calibration = client.context(sid).usage["calibration"]
    assert calibration["family"] == "cl100k_base"
    assert calibration["samples"] >= 2 and calibration["ratio"] != 1.0, "the family learned"
    client.close()
