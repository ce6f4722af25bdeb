"""OpenAI Responses items (docs/reference.md §Message shapes) for the tests that post, render
or validate them: a reasoning item, function calls and their outputs, messages."""

from __future__ import annotations

import json
from typing import Any

REASONING = {
    "type": "reasoning",
    "id": "rs_1",
    "summary": [{"type": "summary_text", "text": "Read the test first."}],
    "encrypted_content": "gAAAAB-opaque-blob==",
}


def call(call_id: str, path: str = "a.py", **extra: Any) -> dict[str, Any]:
    arguments = json.dumps({"path": path})
    return {"type": "function_call", "call_id": call_id, "name": "read_file", **extra} | {
        "arguments": arguments
    }


def output(call_id: str, text: str, **extra: Any) -> dict[str, Any]:
    return {"type": "function_call_output", "call_id": call_id, "output": text, **extra}


def typed(text: str) -> dict[str, Any]:
    """A user message posted as a string, as Foldwise serves it back in openai_responses: the
    easy form, unchanged (app/engine/responses.py)."""
    return {"role": "user", "content": text}


def said(role: str, *texts: str, **extra: Any) -> dict[str, Any]:
    """A message item as the Responses API returns it (an assistant's with an id: output_text
    parts) and as Foldwise serves it (an assistant's without an id: its texts as one string,
    the easy form; anyone else's as input_text parts)."""
    if role == "assistant" and "id" not in extra:
        return {"type": "message", "role": role, "content": "\n".join(texts), **extra}
    parts: list[dict[str, Any]] = [
        {"type": "output_text", "text": t, "annotations": []}
        if role == "assistant"
        else {"type": "input_text", "text": t}
        for t in texts
    ]
    return {"type": "message", "role": role, "content": parts, **extra}
