"""An OpenAI Agents SDK agent whose session history lives in Foldwise:
`session=FoldwiseSession(...)` gives it folding (summary + recent items under the budget) and
tool-call/result pairs that are never split.

    pip install './clients/python[agents]'
    make run                                    # Foldwise on http://127.0.0.1:8000
    OPENAI_API_KEY=... python examples/openai_agents_session.py "Weather in Paris?" [session-id]
"""

from __future__ import annotations

import asyncio
import sys

from agents import Agent, Runner, function_tool
from foldwise_client.agents import FoldwiseSession


@function_tool
def get_weather(city: str) -> str:
    """The current weather in a city."""
    return f"sunny in {city}"


agent = Agent(
    name="Assistant",
    instructions="You are a concise assistant. Use tools when they help.",
    tools=[get_weather],
    model="gpt-4o-mini",
)


async def main() -> None:
    text = sys.argv[1] if len(sys.argv) > 1 else "What is the weather in Paris?"
    session_id = sys.argv[2] if len(sys.argv) > 2 else "example-openai-agents"
    # Created on first use with these options; the summary arrives as leading items.
    # Closes its connections on the way out; a module-level session works too (any loop).
    async with FoldwiseSession(session_id, session_options={"model": "gpt-4o-mini"}) as session:
        result = await Runner.run(agent, text, session=session)
    print(result.final_output)


if __name__ == "__main__":
    asyncio.run(main())
