"""A scripted LangChain chat model (no network) that records what it was sent: asked about the
weather it calls `get_weather`; given a tool result it reports it; otherwise it acknowledges.
Also the weather agent's tool, and six weather turns of an agent that folds (the LangGraph hook
and the LangChain middleware tests drive the same agent)."""

from __future__ import annotations

import uuid
from collections.abc import Callable, Sequence
from typing import Any

from foldwise_client import Foldwise
from foldwise_client.langchain import AdapterOptions
from langchain_core.callbacks import CallbackManagerForLLMRun
from langchain_core.language_models import BaseChatModel, LanguageModelInput
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage, ToolMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from langchain_core.runnables import Runnable, RunnableConfig
from langchain_core.tools import BaseTool, tool
from pydantic import Field


class ScriptedChatModel(BaseChatModel):
    seen: list[list[BaseMessage]] = Field(default_factory=list)
    # When set, each reply reports this many input tokens (`usage_metadata`), as providers do.
    input_tokens: int | None = None

    @property
    def _llm_type(self) -> str:
        return "scripted"

    def bind_tools(
        self,
        tools: Sequence[dict[str, Any] | type | Callable[..., Any] | BaseTool],
        **kwargs: Any,
    ) -> Runnable[LanguageModelInput, AIMessage]:
        return self

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        self.seen.append(list(messages))
        last = messages[-1]
        if isinstance(last, ToolMessage):
            reply = AIMessage(content=f"The tool says: {last.content}")
        elif isinstance(last, HumanMessage) and "weather" in str(last.content).lower():
            call = {
                "name": "get_weather",
                "args": {"city": "Paris"},
                "id": f"call_{uuid.uuid4().hex}",
            }
            reply = AIMessage(content="", tool_calls=[call])
        else:
            reply = AIMessage(content=f"Noted: {str(last.content)[:60]}")
        if self.input_tokens is not None:
            reply.usage_metadata = {
                "input_tokens": self.input_tokens,
                "output_tokens": 1,
                "total_tokens": self.input_tokens + 1,
            }
        return ChatResult(generations=[ChatGeneration(message=reply)])


@tool
def get_weather(city: str) -> str:
    """The weather in a city."""
    return f"sunny in {city}"


def folding(client: Foldwise, system_prompt: str) -> AdapterOptions:
    """Options that fold a weather conversation within six turns."""
    session = {"system_prompt": system_prompt, "settings": {"keep_recent": 4}}
    return {"client": client, "session_options": session, "context_options": {"max_tokens": 700}}


def six_weather_turns(
    agent: Any, client: Foldwise, sid: str, model: ScriptedChatModel
) -> list[BaseMessage]:
    """Runs six weather turns on thread `sid`; checks that every message was stored once and
    the model got a folded context led by a system message; returns what it was sent last."""
    config: RunnableConfig = {"configurable": {"thread_id": sid}}
    for turn in range(6):
        question = f"What is the weather, take {turn}? " + "context " * 50
        state = agent.invoke({"messages": [HumanMessage(question)]}, config)

    messages = state["messages"]
    assert isinstance(messages[-1], AIMessage) and "sunny in Paris" in str(messages[-1].content)
    stored = list(client.iter_messages(sid))
    assert len(stored) == len(messages) == 6 * 4, "every message stored once, the reply too"
    assert [m["client_id"] for m in stored] == [m.id for m in messages]
    sent = model.seen[-1]
    assert isinstance(sent[0], SystemMessage)
    assert len(sent) < len(messages), "the model got the folded context, the state stays whole"
    assert client.get_session(sid)["summary"] is not None
    return sent
