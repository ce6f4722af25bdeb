"""Deterministic agentic transcripts with planted facts, for the summary-retention benchmark.

A transcript is a coding-agent session: user turns with constraints, assistant turns with
decisions, and tool traffic in both shapes (Anthropic blocks or OpenAI tool_calls, chosen per
transcript) with varied tool names. Noise dominates, as in real sessions: large file reads and
long build logs. Every planted fact carries the exact `key` string a summary must contain for
the fact to count as retained (a path, an error line, a constraint or decision phrase).
Phrasings are drawn from several templates per kind, not from the extractor's keyword list.
"""

from __future__ import annotations

import json
import random
from dataclasses import dataclass, field
from typing import Any

MODULES = ["billing", "auth", "export", "search", "sync", "invoices", "audit", "webhooks", "cache"]
MODULES += ["scheduler", "reports", "uploads", "profiles", "mailer", "metrics", "gateway"]
LIBS = [
    ("orjson", "json"), ("httpx", "requests"), ("polars", "pandas"), ("structlog", "logging"),
    ("pydantic", "marshmallow"), ("ruff", "flake8"), ("uv", "pip-tools"),
    ("asyncpg", "psycopg2"), ("tenacity", "hand-written retries"), ("attrs", "namedtuples"),
]  # fmt: skip
CONSTRAINTS = [
    "Don't modify anything under {dir}/ while you work.",
    "Never change the public signature of {func}.",
    "Make sure every timestamp in {mod} stays in UTC.",
    "You must keep {mod} compatible with Python 3.11.",
    "Only touch files in {dir}/ for this fix.",
    "Please avoid adding new dependencies to {mod}.",
    "It's important that the {mod} API responses keep their field order.",
    "Under no circumstances drop rows from the {table} table.",
    "Remember to leave {func} backwards compatible.",
    "Be careful not to log the contents of {table}.",
    "I'd rather you not rename {func}.",
    "Keep the {mod} migrations reversible.",
]
DECISIONS = [
    "We'll use {new} instead of {old} in {mod}.",
    "Going with {new} for {mod}: {old} is too slow here.",
    "I decided to move {func} into {mod}/core.py.",
    "Let's go with a unique index on {table}.{column}.",
    "The plan is to cache {func} results per request.",
    "I'll switch {mod} to {new}.",
    "Settled on batching {table} writes in groups of 500.",
    "Better to validate {column} at the boundary rather than in {func}.",
]
ERRORS = [
    "E       AssertionError: assert {a} == {b}",
    "ModuleNotFoundError: No module named '{mod}_compat'",
    "TypeError: {func}() got an unexpected keyword argument '{column}'",
    "KeyError: '{column}'",
    "error[E0308]: mismatched types in {mod}/lib.rs",
    "Error: ENOENT: no such file or directory, open 'config/{mod}.json'",
    "sqlalchemy.exc.IntegrityError: duplicate key value violates unique constraint"
    ' "uq_{table}_{column}"',
    "FAILED tests/test_{mod}.py::test_{func} - ValueError: invalid literal for int() with base 10:"
    " '{a}x'",
    "fatal: pathspec 'src/{mod}/old_{a}.py' did not match any files",
    "npm ERR! missing script: build:{mod}",
]
QUESTIONS = [
    "Should I also update the {mod} changelog?",
    "Do you want {func} to stay synchronous?",
    "Is it fine to regenerate the {table} fixtures?",
]
VERBS = ["load", "save", "sync", "parse", "render"]
READ_TOOLS = ["read_file", "view_file", "Read", "open_file", "get_file_contents"]
EDIT_TOOLS = ["edit_file", "str_replace", "Edit", "apply_patch", "sed", "update_file", "write_file"]
SHELL_TOOLS = ["bash", "run_command", "execute", "shell"]


@dataclass(frozen=True)
class Fact:
    kind: str  # error | modified_file | constraint | decision | open_question
    key: str


@dataclass
class Transcript:
    seed: int
    messages: list[dict[str, Any]] = field(default_factory=list)
    facts: list[Fact] = field(default_factory=list)


class _Builder:
    def __init__(self, seed: int) -> None:
        self.rng = random.Random(seed)
        self.out = Transcript(seed)
        self.openai = self.rng.random() < 0.5
        self.calls = 0

    def word(self, kind: str) -> str:
        rng = self.rng
        return {
            "mod": rng.choice(MODULES),
            "dir": f"src/{rng.choice(MODULES)}",
            "func": f"{rng.choice(VERBS)}_{rng.choice(MODULES)}",
            "table": rng.choice(["orders", "users", "events", "ledger", "sessions"]),
            "column": rng.choice(["tenant_id", "created_at", "amount", "external_ref", "status"]),
        }[kind]

    def fill(self, template: str) -> str:
        new, old = self.rng.choice(LIBS)
        values = {k: self.word(k) for k in ("mod", "dir", "func", "table", "column")}
        return template.format(
            new=new, old=old, a=self.rng.randint(2, 999), b=self.rng.randint(2, 999), **values
        )

    def user(self, text: str) -> None:
        self.out.messages.append({"role": "user", "content": text})

    def assistant(self, text: str) -> None:
        self.out.messages.append({"role": "assistant", "content": text})

    def tool(self, name: str, args: dict[str, Any], result: str, *, text: str = "") -> None:
        self.calls += 1
        call_id = f"call_{self.calls}"
        if self.openai:
            call = {
                "id": call_id,
                "type": "function",
                "function": {"name": name, "arguments": json.dumps(args)},
            }
            self.out.messages.append(
                {"role": "assistant", "content": text or None, "tool_calls": [call]}
            )
            self.out.messages.append({"role": "tool", "tool_call_id": call_id, "content": result})
            return
        blocks: list[dict[str, Any]] = [{"type": "text", "text": text}] if text else []
        blocks.append({"type": "tool_use", "id": call_id, "name": name, "input": args})
        self.out.messages.append({"role": "assistant", "content": blocks})
        self.out.messages.append(
            {
                "role": "user",
                "content": [{"type": "tool_result", "tool_use_id": call_id, "content": result}],
            }
        )

    def path(self) -> str:
        ext = self.rng.choice([".py", ".ts", ".go", ".sql", ".yaml"])
        kind = self.rng.choice(["core", "api", "models", "util"])
        return f"src/{self.rng.choice(MODULES)}/{kind}_{self.rng.randint(1, 99)}{ext}"

    def code(self, lines: int) -> str:
        body = []
        for n in range(lines):
            verb = self.rng.choice(["get", "set", "build", "check"])
            name = f"{verb}_{self.rng.choice(MODULES)}_{n}"
            body.append(
                f"def {name}(value, *, strict=False):\n    return normalize(value, strict)\n"
            )
        return "\n".join(body)

    def log(self, lines: int, tail: str) -> str:
        rows = [
            f"2026-11-21T10:{n // 60:02d}:{n % 60:02d} INFO {self.rng.choice(MODULES)} step {n} ok"
            for n in range(lines)
        ]
        return "\n".join([*rows, tail])

    # noise ------------------------------------------------------------------------------
    def read_noise(self) -> None:
        path = self.path()
        tool = self.rng.choice(READ_TOOLS)
        args = {"file_path": path} if tool == "Read" else {"path": path}
        self.tool(tool, args, self.code(self.rng.randint(10, 80)))

    def log_noise(self) -> None:
        command = self.rng.choice(
            ["make build", "pytest -q tests/unit", "npm run lint", "go vet ./..."]
        )
        self.tool(
            self.rng.choice(SHELL_TOOLS),
            {"command": command},
            self.log(self.rng.randint(10, 120), "exit code: 0"),
        )

    def chatter(self) -> None:
        self.assistant(
            self.rng.choice(
                [
                    "Looking at the next part.",
                    "That output looks fine.",
                    "Checking the call sites now.",
                ]
            )
        )

    # planted facts ------------------------------------------------------------------------
    def plant_edit(self) -> None:
        path = self.path()
        tool = self.rng.choice(EDIT_TOOLS)
        if tool == "apply_patch":
            args: dict[str, Any] = {
                "input": f"*** Begin Patch\n*** Update File: {path}\n@@\n-old\n+new\n*** End Patch"
            }
        elif tool == "sed":
            tool, args = self.rng.choice(SHELL_TOOLS), {"command": f"sed -i 's/old/new/g' {path}"}
        elif tool == "Edit":
            args = {"file_path": path, "old_string": "old", "new_string": "new"}
        else:
            args = {"path": path, "old_str": "old", "new_str": "new"}
        self.tool(READ_TOOLS[0], {"path": path}, self.code(self.rng.randint(20, 60)))
        self.tool(tool, args, "The file has been updated.")
        self.out.facts.append(Fact("modified_file", path))

    def plant_error(self) -> None:
        line = self.fill(self.rng.choice(ERRORS))
        command = self.rng.choice(
            [
                "pytest -q",
                "cargo build",
                "npm run build",
                "alembic upgrade head",
                "git checkout -- .",
            ]
        )
        command += f" # {self.rng.randint(1, 9999)}"
        output = (
            self.log(self.rng.randint(30, 150), line) + f"\nexit code: {self.rng.choice([1, 2])}"
        )
        self.tool(self.rng.choice(SHELL_TOOLS), {"command": command}, output)
        self.out.facts.append(Fact("error", line.strip()))
        if self.rng.random() < 0.5:  # fixed later in the session
            self.plant_edit()
            self.tool(self.rng.choice(SHELL_TOOLS), {"command": command}, "all good\nexit code: 0")

    def plant_constraint(self) -> None:
        sentence = self.fill(self.rng.choice(CONSTRAINTS))
        self.user(
            f"{self.rng.choice(['One more thing.', 'Also, note this.', 'Quick note.'])} {sentence}"
        )
        self.out.facts.append(Fact("constraint", sentence))

    def plant_decision(self) -> None:
        sentence = self.fill(self.rng.choice(DECISIONS))
        self.tool(
            self.rng.choice(READ_TOOLS[:2]),
            {"path": self.path()},
            self.code(10),
            text=f"{sentence} Reading the module first.",
        )
        self.out.facts.append(Fact("decision", sentence))


def generate(seed: int, *, rounds: int = 240) -> Transcript:
    """A session of `rounds` steps; roughly 1 step in 3 plants a fact, the rest is noise."""
    builder = _Builder(seed)
    builder.user(f"Please stabilise the {builder.word('mod')} service: the nightly build is red.")
    planters = [
        builder.plant_edit,
        builder.plant_error,
        builder.plant_constraint,
        builder.plant_decision,
    ]
    noise = [builder.read_noise, builder.read_noise, builder.log_noise, builder.chatter]
    for _ in range(rounds):
        step = (
            builder.rng.choice(planters)
            if builder.rng.random() < 0.35
            else builder.rng.choice(noise)
        )
        step()
    question = builder.fill(builder.rng.choice(QUESTIONS))
    builder.assistant(f"The {builder.word('mod')} fix is in. {question}")
    builder.out.facts.append(Fact("open_question", question))
    return builder.out
