"""A LangGraph ReAct agent whose model input comes from Foldwise: the pre-model hook stores new
messages in the session and hands the model the folded context (`llm_input_messages`); the
post-model hook stores the reply. Foldwise is the memory: each run continues the conversation.

    pip install './clients/python[langchain]' langchain-openai
    make run                                    # Foldwise on http://127.0.0.1:8000
    OPENAI_API_KEY=... python examples/langgraph_agent.py "Weather in Paris?" [session-id]
"""

from __future__ import annotations

import sys

from foldwise_client.langchain import FoldwiseHook
from langchain_core.tools import tool
from langchain_openai import ChatOpenAI
from langgraph.prebuilt import create_react_agent


@tool
def get_weather(city: str) -> str:
    """The current weather in a city."""
    return f"sunny in {city}"


def main() -> None:
    text = sys.argv[1] if len(sys.argv) > 1 else "What is the weather in Paris?"
    session_id = sys.argv[2] if len(sys.argv) > 2 else "example-langgraph"
    # The system prompt lives in the session, so the summary of folded messages rides with it.
    hook = FoldwiseHook(
        session_options={"model": "gpt-4o-mini", "system_prompt": "You are a concise assistant."}
    )
    agent = create_react_agent(
        ChatOpenAI(model="gpt-4o-mini"),
        [get_weather],
        pre_model_hook=hook.pre_model_hook,
        post_model_hook=hook.post_model_hook,
    )
    result = agent.invoke(
        {"messages": [("user", text)]}, {"configurable": {"thread_id": session_id}}
    )
    print(result["messages"][-1].content)


if __name__ == "__main__":
    main()
