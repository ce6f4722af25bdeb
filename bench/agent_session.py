"""A long, deterministic coding-agent session in Anthropic shape, for the prompt-cache bench.

One task message, then a tool loop: the assistant says a line and calls one tool, the tool
answers. Tool outputs have the sizes such sessions show: a file read of 20–120 lines
(≈ 1–6 k characters), a test run of 10–60 lines, a grep of 3–25 hits, a short write
confirmation; every 12th step the user adds a follow-up instruction. Words come from a
seeded generator (bench/conversation.py's vocabulary), so no two outputs are equal.
"""

from __future__ import annotations

import random
from typing import Any

from bench.conversation import _file_body, _words

TASK = (
    "Fix the failing session tests in tests/api and keep the context route fast: "
    "the budget must hold, tool pairs stay together, and every change needs a test."
)
FOLLOW_UP_EVERY = 12


def _test_run(rng: random.Random, step: int) -> str:
    lines = [f"tests/test_{_words(rng, 1)}_{step}.py::test_{_words(rng, 1)} PASSED"]
    lines += [
        f"tests/test_{_words(rng, 1)}.py::test_{_words(rng, 2).replace(' ', '_')} "
        + rng.choice(["PASSED", "PASSED", "PASSED", "FAILED"])
        for _ in range(rng.randint(10, 60))
    ]
    return "\n".join(lines) + f"\n{rng.randint(1, 9)} failed, {rng.randint(40, 400)} passed"


def _grep(rng: random.Random) -> str:
    hits = rng.randint(3, 25)
    return "\n".join(
        f"app/{_words(rng, 1)}/{_words(rng, 1)}.py:{rng.randint(1, 400)}: {_words(rng, 8)}"
        for _ in range(hits)
    )


def _tool_step(rng: random.Random, step: int) -> tuple[str, dict[str, Any], str]:
    path = f"app/{_words(rng, 1)}/{_words(rng, 1)}_{step}.py"
    kind = rng.choices(["read_file", "run_tests", "grep", "write_file"], [5, 2, 2, 1])[0]
    if kind == "read_file":
        return kind, {"path": path}, _file_body(rng, rng.randint(20, 120))
    if kind == "run_tests":
        return kind, {"args": "-q tests/api"}, _test_run(rng, step)
    if kind == "grep":
        return kind, {"pattern": _words(rng, 1), "path": "app"}, _grep(rng)
    body = _file_body(rng, rng.randint(5, 30))
    return kind, {"path": path, "content": body}, f"wrote {len(body)} bytes to {path}"


def agent_session(messages: int = 520, seed: int = 8) -> list[dict[str, Any]]:
    """`messages` Anthropic-shaped messages: the task, then tool steps and follow-ups."""
    rng = random.Random(seed)
    out: list[dict[str, Any]] = [{"role": "user", "content": TASK}]
    step = 0
    while len(out) < messages:
        step += 1
        if step % FOLLOW_UP_EVERY == 0:
            out.append({"role": "assistant", "content": f"Done: {_words(rng, 25)}."})
            out.append({"role": "user", "content": f"Now {_words(rng, 18)}, and keep tests green."})
            continue
        name, arguments, output = _tool_step(rng, step)
        call_id = f"toolu_{step:06d}"
        call = {"type": "tool_use", "id": call_id, "name": name, "input": arguments}
        intent = {"type": "text", "text": f"Next, {_words(rng, rng.randint(6, 20))}."}
        out.append({"role": "assistant", "content": [intent, call]})
        result = {"type": "tool_result", "tool_use_id": call_id, "content": output}
        out.append({"role": "user", "content": [result]})
    return out[:messages]
