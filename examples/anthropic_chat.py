"""A chat turn with the Anthropic SDK; Foldwise keeps the history and folds it to the budget.

    pip install ./clients/python anthropic
    make run                                    # Foldwise on http://127.0.0.1:8000
    ANTHROPIC_API_KEY=... python examples/anthropic_chat.py "Hello!" [session-id] [turn-id]

Each run is one turn of the same conversation: the question and the reply are stored in the
session, and Claude gets the folded context (summary + recent messages, prompt-cache markers).
A turn that failed (the provider down, say) is retried with the same turn-id: stored once.
"""

from __future__ import annotations

import contextlib
import sys
import uuid

import anthropic
from foldwise_client import Foldwise, SessionExistsError

foldwise = Foldwise()  # $FOLDWISE_BASE_URL (default http://127.0.0.1:8000), $FOLDWISE_API_KEY
claude = anthropic.Anthropic()  # $ANTHROPIC_API_KEY


def chat(session_id: str, text: str, turn_id: str) -> str:
    # Stored, and the context to send next (under the budget) read, in one request; the
    # turn's client_ids make a retry of a failed turn (the same turn_id) store nothing twice.
    user = {"role": "user", "content": text, "client_id": f"{turn_id}:user"}
    ctx = foldwise.turn(session_id, [user]).context
    reply = claude.messages.create(**ctx.anthropic_kwargs())
    content = [block.model_dump(exclude_none=True) for block in reply.content]
    answer = {"role": "assistant", "content": content, "client_id": f"{turn_id}:assistant"}
    foldwise.append_messages(session_id, [answer])
    foldwise.report_usage(session_id, reply.usage.input_tokens)  # calibrates the estimates
    return "".join(block.text for block in reply.content if block.type == "text")


def main() -> None:
    text = sys.argv[1] if len(sys.argv) > 1 else "Hello! What can you do?"
    session_id = sys.argv[2] if len(sys.argv) > 2 else "example-anthropic-chat"
    turn_id = sys.argv[3] if len(sys.argv) > 3 else str(uuid.uuid4())  # reuse it to retry
    with contextlib.suppress(SessionExistsError):  # a later turn of the same conversation
        foldwise.create_session(session_id, system_prompt="You are a concise assistant.")
    print(chat(session_id, text, turn_id))


if __name__ == "__main__":
    main()
