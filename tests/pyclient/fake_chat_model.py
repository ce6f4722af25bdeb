"""A scripted LangChain chat model (no network) that records what it was sent: asked about the
weather it calls `get_weather`; given a tool result it reports it; otherwise it acknowledges."""

from __future__ import annotations

import uuid
from collections.abc import Callable, Sequence
from typing import Any

from langchain_core.callbacks import CallbackManagerForLLMRun
from langchain_core.language_models import BaseChatModel, LanguageModelInput
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from langchain_core.runnables import Runnable
from langchain_core.tools import BaseTool
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
