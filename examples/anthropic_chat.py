"""A chat turn with the Anthropic SDK; Foldwise keeps the history and folds it to the budget.

    pip install ./clients/python anthropic
    make run                                    # Foldwise on http://127.0.0.1:8000
    ANTHROPIC_API_KEY=... python examples/anthropic_chat.py "Hello!" [session-id]

Each run is one turn of the same conversation: the question and the reply are stored in the
session, and Claude gets the folded context (summary + recent messages, prompt-cache markers).
"""

from __future__ import annotations

import contextlib
import sys

import anthropic
from foldwise_client import Foldwise, SessionExistsError

foldwise = Foldwise()  # $FOLDWISE_BASE_URL (default http://127.0.0.1:8000), $FOLDWISE_API_KEY
claude = anthropic.Anthropic()  # $ANTHROPIC_API_KEY


def chat(session_id: str, text: str) -> str:
    foldwise.append_messages(session_id, [{"role": "user", "content": text}])
    ctx = foldwise.context(session_id)  # what to send next, under the budget
    reply = claude.messages.create(**ctx.anthropic_kwargs())
    content = [block.model_dump(exclude_none=True) for block in reply.content]
    foldwise.append_messages(session_id, [{"role": "assistant", "content": content}])
    foldwise.report_usage(session_id, reply.usage.input_tokens)  # calibrates the estimates
    return "".join(block.text for block in reply.content if block.type == "text")


def main() -> None:
    text = sys.argv[1] if len(sys.argv) > 1 else "Hello! What can you do?"
    session_id = sys.argv[2] if len(sys.argv) > 2 else "example-anthropic-chat"
    with contextlib.suppress(SessionExistsError):  # a later turn of the same conversation
        foldwise.create_session(session_id, system_prompt="You are a concise assistant.")
    print(chat(session_id, text))


if __name__ == "__main__":
    main()
