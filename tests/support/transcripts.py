"""Generated conversations, shared by the tests and the benchmarks (bench/ imports them).

`agent_session` is a deterministic coding-agent session: turns in which the user asks, the
assistant works through `steps` tool steps (a line of intent and one call, then the tool's
answer) and reports. Tools and output sizes follow real agent runs: a file read of 20–120
lines, a test run of 10–60 lines, a grep of 3–25 hits, a short write confirmation. Words come
from a seeded generator, so no two outputs are equal and a seed always gives the same session.
`chat` is plain question/answer text pairs.
"""

from __future__ import annotations

import json
import random
from typing import Any

from tests.support.factories import assistant, openai_tool_result, tool_result, user

Raw = list[dict[str, Any]]
VOCABULARY = (
    "parse config session token budget summary handler request response cache retry index "
    "schema migration value error module function client server context window message "
    "offset cursor payload stream buffer limit worker queue lease version commit rollback"
)
WORDS = VOCABULARY.split()
CODE_LINES = (
    "def {a}_{b}(self, {c}: int) -> str:",
    "    return self.{a}.{b}({c}, strict=True)",
    "    if {a} is None or {b} > {c}:",
    "        raise ValueError(f'{a} {b} {{{c}!r}}')",
    "{a}_{b} = {{'{c}': {n}, '{a}': None}}",
    "    for {a} in self.{b}_{c}s:",
    "# {a} the {b} before {c}: see issue {n}",
)


def words(rng: random.Random, count: int) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(count))


def code(rng: random.Random, lines: int) -> str:
    return "\n".join(
        rng.choice(CODE_LINES).format(
            a=rng.choice(WORDS), b=rng.choice(WORDS), c=rng.choice(WORDS), n=rng.randint(1, 999)
        )
        for _ in range(lines)
    )


def _tool_step(rng: random.Random, step: int) -> tuple[str, dict[str, Any], str]:
    path = f"app/{rng.choice(WORDS)}/{rng.choice(WORDS)}_{step}.py"
    kind = rng.choices(["read_file", "run_tests", "grep", "write_file"], [5, 2, 2, 1])[0]
    if kind == "read_file":
        return kind, {"path": path}, code(rng, rng.randint(20, 120))
    if kind == "run_tests":
        outcomes = ["PASSED", "PASSED", "PASSED", "FAILED"]
        lines = [
            f"tests/test_{rng.choice(WORDS)}.py::test_{rng.choice(WORDS)} {rng.choice(outcomes)}"
            for _ in range(rng.randint(10, 60))
        ]
        lines.append(f"{rng.randint(1, 9)} failed, {rng.randint(40, 400)} passed")
        return kind, {"args": "-q tests/api"}, "\n".join(lines)
    if kind == "grep":
        hits = [
            f"app/{rng.choice(WORDS)}.py:{rng.randint(1, 400)}: {words(rng, 8)}"
            for _ in range(rng.randint(3, 25))
        ]
        return kind, {"pattern": rng.choice(WORDS), "path": "app"}, "\n".join(hits)
    body = code(rng, rng.randint(5, 30))
    return kind, {"path": path, "content": body}, f"wrote {len(body)} bytes to {path}"


def _call(shape: str, step: int, intent: str, name: str, args: dict[str, Any], out: str) -> Raw:
    if shape == "openai":
        call_id = f"call_{step:08d}"
        function = {"name": name, "arguments": json.dumps(args)}
        call = {"id": call_id, "type": "function", "function": function}
        return [assistant(intent, tool_calls=[call]), openai_tool_result(call_id, out)]
    call_id = f"toolu_{step:08d}"
    blocks = [
        {"type": "text", "text": intent},
        {"type": "tool_use", "id": call_id, "name": name, "input": args},
    ]
    return [{"role": "assistant", "content": blocks}, tool_result(call_id, out)]


def agent_session(count: int, *, shape: str = "anthropic", steps: int = 1, seed: int = 7) -> Raw:
    """`count` messages; a turn is 2 × `steps` + 2 messages (cut on a turn to keep pairs)."""
    rng = random.Random(seed)
    out: Raw = []
    step = turn = 0
    while len(out) < count:
        out.append(user(f"Please fix test_{rng.choice(WORDS)}_{turn}: {words(rng, 28)}."))
        for _ in range(steps):
            name, args, output = _tool_step(rng, step)
            intent = f"Next, {words(rng, rng.randint(6, 20))}."
            out += _call(shape, step, intent, name, args, output)
            step += 1
        out.append(assistant(f"Done: {words(rng, 40)}. Ran pytest, exit 0."))
        turn += 1
    return out[:count]


def summary_text(seed: int = 11) -> str:
    """A structured summary of the kind the rule summarizer writes (~600 tokens)."""
    rng = random.Random(seed)
    lines = []
    for section in ("Task", "Decisions", "Files modified", "Commands run", "Errors", "Focus"):
        lines += [f"## {section}", *(f"- {words(rng, 14)}" for _ in range(6))]
    return "\n".join(lines)


def chat(pairs: int, length: int = 60) -> Raw:
    """`pairs` user/assistant text pairs of about `length` words each."""
    out: Raw = []
    for i in range(pairs):
        out += [user(f"Question {i}: " + "detail " * length)]
        out += [assistant(f"Answer {i}: " + "result " * length)]
    return out
