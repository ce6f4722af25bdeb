"""LangChain 1.x agents (extra `[langchain]`): `FoldwiseMiddleware` for
`langchain.agents.create_agent(model, tools, middleware=[FoldwiseMiddleware(...)])`.

Before each model call the state's messages not stored yet are appended (by LangChain id, as
`FoldwiseHook` does) and the model gets the session's folded context instead of the whole
state, both in one request (POST …/turn); after it the reply is stored at once. The agent's
own `system_prompt` is kept, ahead of the session's system prompt and summary. The session
is `session_id`, else the run's `configurable.thread_id`. When the model reports
`usage_metadata`, its input tokens go to POST …/usage with the agent's system prompt and tools
as `unserved`, so the session's model family calibrates without user code.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any, Unpack, cast

from langchain.agents.middleware import AgentMiddleware, ModelRequest, ModelResponse
from langchain_core.messages import AnyMessage, BaseMessage, SystemMessage
from langchain_core.utils.function_calling import convert_to_openai_tool
from langgraph.config import get_config
from langgraph.runtime import Runtime

from foldwise_client.langchain import AdapterOptions, FoldwiseHook


class FoldwiseMiddleware(AgentMiddleware):
    def __init__(self, session_id: str | None = None, **options: Unpack[AdapterOptions]) -> None:
        super().__init__()
        self.hook = FoldwiseHook(session_id, **options)

    def wrap_model_call(
        self, request: ModelRequest, handler: Callable[[ModelRequest], ModelResponse]
    ) -> ModelResponse:
        session_id, context = self.hook.turn(request.state, get_config())
        response = handler(_with_context(request, context))
        if (tokens := _input_tokens(response)) is not None:
            self.hook.sessions.report_usage(session_id, tokens, _unserved(request))
        return response

    async def awrap_model_call(
        self,
        request: ModelRequest,
        handler: Callable[[ModelRequest], Awaitable[ModelResponse]],
    ) -> ModelResponse:
        session_id, context = await self.hook.aturn(request.state, get_config())
        response = await handler(_with_context(request, context))
        if (tokens := _input_tokens(response)) is not None:
            await self.hook.sessions.areport_usage(session_id, tokens, _unserved(request))
        return response

    def after_model(self, state: Any, runtime: Runtime[Any]) -> dict[str, Any] | None:
        self.hook.store(state, get_config())
        return None

    async def aafter_model(self, state: Any, runtime: Runtime[Any]) -> dict[str, Any] | None:
        await self.hook.astore(state, get_config())
        return None


def _with_context(request: ModelRequest, context: list[BaseMessage]) -> ModelRequest:
    """The request with the session's context as its messages; a leading system message of
    the context (the session's system prompt, the summary) joins the agent's own."""
    system = request.system_message
    if context and isinstance(context[0], SystemMessage):
        texts = [system.text, context[0].text] if system is not None else [context[0].text]
        system, context = SystemMessage("\n\n".join(texts)), context[1:]
    return request.override(messages=cast(list[AnyMessage], context), system_message=system)


def _input_tokens(response: ModelResponse) -> int | None:
    """What the provider counted as input (LangChain's `usage_metadata`), when it said."""
    for message in response.result:
        usage = getattr(message, "usage_metadata", None)
        if usage and usage.get("input_tokens"):
            return int(usage["input_tokens"])
    return None


def _unserved(request: ModelRequest) -> dict[str, Any]:
    """What the model call carried beyond the session's context: the agent's own system
    prompt and its tools, so the usage report calibrates like for like."""
    unserved: dict[str, Any] = {"tools": [convert_to_openai_tool(t) for t in request.tools]}
    if request.system_message is not None and request.system_message.text:
        unserved["system"] = request.system_message.text
    return unserved
