"""Helpers for the rule summarizer's regression tests: one-shot summary, one section of it."""

from __future__ import annotations

import json
from typing import Any

from app.summarizers.rule import rule_summary
from app.tokens.counter import TiktokenCounter
from tests.summarizers.helpers import conversation

BIG = 4000


def summarize(counter: TiktokenCounter, *items: Any, budget: int = BIG) -> str:
    return rule_summary(conversation(*items), None, budget, counter)


def section(text: str, header: str) -> str:
    """The lines of one section of a rendered summary."""
    lines = text.splitlines()
    if header not in lines:
        return ""
    start = lines.index(header) + 1
    end = next((n for n in range(start, len(lines)) if not lines[n].startswith("- ")), len(lines))
    return "\n".join(lines[start:end])


def anthropic_call(
    call_id: str, name: str, args: dict[str, Any], result: str, **extra: Any
) -> list:  # type: ignore[type-arg]
    return [
        ("assistant", [{"type": "tool_use", "id": call_id, "name": name, "input": args}]),
        ("user", [{"type": "tool_result", "tool_use_id": call_id, "content": result, **extra}]),
    ]


def openai_call(call_id: str, name: str, args: dict[str, Any], result: str) -> list:  # type: ignore[type-arg]
    call = {
        "id": call_id,
        "type": "function",
        "function": {"name": name, "arguments": json.dumps(args)},
    }
    return [
        ("assistant", None, {"tool_calls": [call]}),
        ("tool", result, {"tool_call_id": call_id}),
    ]
