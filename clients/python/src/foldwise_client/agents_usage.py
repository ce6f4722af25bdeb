"""`FoldwiseUsageHooks`: Agents SDK run hooks that report each model call's input tokens to
POST …/usage, so the session's model family calibrates without user code:

    result = await Runner.run(agent, text, session=session, hooks=session.usage_hooks())

What the call carried beyond the context the session served (the agent's instructions and
function tools, the run's new input and generated items) goes along as `unserved`, counted by
the server like the context, so the ratio compares like with like. A failed report is logged,
never raised: calibration is a bonus, the run goes on.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

from agents import Agent, FunctionTool, RunContextWrapper, RunHooks
from agents.items import ModelResponse, TResponseInputItem

from foldwise_client.errors import FoldwiseError

if TYPE_CHECKING:
    from foldwise_client.agents import FoldwiseSession

logger = logging.getLogger(__name__)


class FoldwiseUsageHooks(RunHooks[Any]):
    def __init__(self, session: FoldwiseSession) -> None:
        self.session = session
        # Per run (its context wrapper): the instructions and input of the call in flight.
        self._sent: dict[int, tuple[str | None, list[TResponseInputItem]]] = {}

    async def on_llm_start(
        self,
        context: RunContextWrapper[Any],
        agent: Agent[Any],
        system_prompt: str | None,
        input_items: list[TResponseInputItem],
    ) -> None:
        self._sent[id(context)] = (system_prompt, list(input_items))

    async def on_llm_end(
        self, context: RunContextWrapper[Any], agent: Agent[Any], response: ModelResponse
    ) -> None:
        system_prompt, input_items = self._sent.pop(id(context), (None, []))
        tokens = response.usage.input_tokens
        if not tokens:
            return
        served = self.session.served_items
        unserved: dict[str, Any] = {
            "messages": input_items[served:] if len(input_items) >= served else input_items,
            "tools": [_function_tool(t) for t in agent.tools if isinstance(t, FunctionTool)],
        }
        if system_prompt:
            unserved["system"] = system_prompt
        model = self.session.context_options.get("model")
        try:
            await self.session.client.report_usage(
                self.session.session_id, tokens, model=model, unserved=unserved
            )
        except FoldwiseError as error:
            logger.warning("usage report for session %r failed: %s", self.session.session_id, error)


def _function_tool(tool: FunctionTool) -> dict[str, Any]:
    """As the Responses API gets it."""
    return {
        "type": "function",
        "name": tool.name,
        "description": tool.description,
        "parameters": tool.params_json_schema,
        "strict": tool.strict_json_schema,
    }
