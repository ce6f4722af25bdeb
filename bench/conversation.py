"""Deterministic agent transcripts for the benchmarks, in Anthropic or OpenAI shape.

A coding-agent session repeats one 4-message turn: the user asks for something, the
assistant says what it will do and calls `read_file`, the tool answers with a file body,
and the assistant reports. Sizes follow what such sessions look like: a request of ~40
tokens, a tool call of ~30, a file excerpt of ~300 and a report of ~60 (≈ 110 tokens per
message on average), with words drawn from a seeded generator so no two turns are equal.
"""

from __future__ import annotations

import json
import random
from typing import Any

TURN_LENGTH = 4
_WORDS = [
    "parse",
    "config",
    "session",
    "token",
    "budget",
    "summary",
    "handler",
    "request",
    "response",
    "cache",
    "retry",
    "index",
    "schema",
    "migration",
    "value",
    "error",
    "module",
    "function",
    "client",
    "server",
    "context",
    "window",
    "message",
    "offset",
    "cursor",
    "payload",
    "stream",
    "buffer",
    "limit",
    "worker",
    "queue",
    "lease",
    "version",
    "commit",
    "rollback",
]
_FILE_LINE_TEMPLATES = (
    "def {a}_{b}(self, {c}: int) -> str:",
    "    return self.{a}.{b}({c}, strict=True)",
    "    if {a} is None or {b} > {c}:",
    "        raise ValueError(f'{a} {b} {{{c}!r}}')",
    "{a}_{b} = {{'{c}': {n}, '{a}': None}}",
    "    for {a} in self.{b}_{c}s:",
    "# {a} the {b} before {c}: see issue {n}",
)


def _words(rng: random.Random, count: int) -> str:
    return " ".join(rng.choice(_WORDS) for _ in range(count))


def _file_body(rng: random.Random, lines: int) -> str:
    return "\n".join(
        rng.choice(_FILE_LINE_TEMPLATES).format(
            a=rng.choice(_WORDS), b=rng.choice(_WORDS), c=rng.choice(_WORDS), n=rng.randint(1, 999)
        )
        for _ in range(lines)
    )


def _turn_texts(rng: random.Random, turn: int) -> tuple[str, str, str, str, str]:
    path = f"src/{rng.choice(_WORDS)}/{rng.choice(_WORDS)}_{turn}.py"
    request = f"Please fix test_{rng.choice(_WORDS)}_{turn} in {path}: {_words(rng, 28)}."
    intent = f"I'll read {path} first to see {_words(rng, 10)}."
    body = _file_body(rng, 30)
    report = f"Fixed: the {_words(rng, 40)}. Ran pytest, exit 0."
    return path, request, intent, body, report


def anthropic_turn(rng: random.Random, turn: int) -> list[dict[str, Any]]:
    path, request, intent, body, report = _turn_texts(rng, turn)
    call_id = f"toolu_{turn:08d}"
    return [
        {"role": "user", "content": request},
        {
            "role": "assistant",
            "content": [
                {"type": "text", "text": intent},
                {"type": "tool_use", "id": call_id, "name": "read_file", "input": {"path": path}},
            ],
        },
        {
            "role": "user",
            "content": [{"type": "tool_result", "tool_use_id": call_id, "content": body}],
        },
        {"role": "assistant", "content": report},
    ]


def openai_turn(rng: random.Random, turn: int) -> list[dict[str, Any]]:
    path, request, intent, body, report = _turn_texts(rng, turn)
    call_id = f"call_{turn:08d}"
    call = {
        "id": call_id,
        "type": "function",
        "function": {"name": "read_file", "arguments": json.dumps({"path": path})},
    }
    return [
        {"role": "user", "content": request},
        {"role": "assistant", "content": intent, "tool_calls": [call]},
        {"role": "tool", "tool_call_id": call_id, "content": body},
        {"role": "assistant", "content": report},
    ]


def transcript(count: int, *, shape: str = "anthropic", seed: int = 7) -> list[dict[str, Any]]:
    """`count` messages (a multiple of TURN_LENGTH keeps tool calls paired)."""
    rng = random.Random(seed)
    make = anthropic_turn if shape == "anthropic" else openai_turn
    messages: list[dict[str, Any]] = []
    turn = 0
    while len(messages) < count:
        messages += make(rng, turn)
        turn += 1
    return messages[:count]


def summary_text(rng_seed: int = 11) -> str:
    """A structured summary of the kind the rule summarizer writes (~600 tokens)."""
    rng = random.Random(rng_seed)
    sections = ["Task", "Decisions", "Files modified", "Commands run", "Errors", "Current focus"]
    lines = []
    for section in sections:
        lines.append(f"## {section}")
        lines += [f"- {_words(rng, 14)}" for _ in range(6)]
    return "\n".join(lines)
