"""A check the rule summarizer was not tuned on: generated agent sessions at 100× compression.

The real-transcript benchmark's held-out files have been looked at, so this is the fresh check:
a small generator (written for this test, in our own words) of sessions shaped like real agent
runs — a Claude Code style session (`tool_use` / `tool_result` blocks, `is_error`, absolute
paths, user corrections mid-way) and an OpenAI-shape one (`tool_calls`, `role: tool`, Codex
style exit framing). The benchmark's mechanical ground truth (evals/real_facts.py) and its
one-line-per-tool-call baseline score them; pooled over the seeds, `rule` must keep at least
as many facts as the baseline in every category.
"""

from __future__ import annotations

import json
import random
from collections import Counter
from typing import Any

from app.services.summarize_context import to_messages
from app.summarizers.rule import rule_summary
from app.tokens.counter import TiktokenCounter
from evals.quality import baseline_summary
from evals.real_facts import CATEGORIES, ground_truth, kept

Raw = list[dict[str, Any]]

ROOT = "/home/dev/work/ledger"
MODULES = ["billing", "invoices", "accounts", "ledger", "exports", "webhooks", "auth", "reports"]
PARTS = ["models", "service", "views", "serializers", "tasks", "utils"]
NAMES = ["total", "apply_discount", "due_date", "currency", "rounding", "retry", "batch_size"]
CORRECTIONS = [
    "No, don't add a new dependency for this, use the standard library.",
    "Please keep the public function names exactly as they are.",
    "Never write to the production settings file, only the local override.",
    "Make sure every new function has a type annotation.",
    "Stop changing the migrations, they are already applied in staging.",
    "Do not reformat files you did not otherwise touch.",
    "Only run the tests of the module you changed, the full suite is slow.",
    "You must keep amounts as integer cents, never floats.",
    "Avoid mocking the database in the new tests.",
    "Important: the CSV export has to keep its column order.",
]
ASIDES = [
    "Let me look at how this is wired before changing anything.",
    "The failure points at the rounding step, so I will check that next.",
    "That passed; moving on to the next module.",
    "I will run the focused tests again after this edit.",
]


def _code(rng: random.Random, lines: int) -> str:
    body = []
    for n in range(1, lines + 1):
        name, other = rng.choice(NAMES), rng.choice(NAMES)
        body.append(f"{n:>6}\t    {name} = compute_{other}(record, {rng.randint(0, 99)})")
    return "\n".join(body)


def _failure(rng: random.Random, test_file: str) -> str:
    name = rng.choice(NAMES)
    return (
        f"============ FAILURES ============\n___ test_{name} ___\n"
        f"    def test_{name}():\n>       assert compute_{name}(7) == {rng.randint(1, 90)}\n"
        f"E       AssertionError: assert {rng.randint(100, 999)} == {rng.randint(1, 90)}\n"
        f"FAILED {test_file}::test_{name} - AssertionError\n"
        f"1 failed, {rng.randint(3, 30)} passed in 0.{rng.randint(10, 99)}s"
    )


class _Session:
    """Steps of one agent session, written out in one of two wire shapes."""

    def __init__(self, seed: int, openai: bool) -> None:
        self.rng = random.Random(seed)
        self.openai = openai
        self.raw: Raw = []
        self.ids = 0

    def user(self, text: str) -> None:
        self.raw.append({"role": "user", "content": text})

    def call(self, name: str, args: dict[str, Any], result: str, error: bool = False) -> None:
        self.ids += 1
        call_id = f"call_{self.ids}"
        aside = self.rng.choice(ASIDES) if self.rng.random() < 0.3 else ""
        if self.openai:
            function = {"name": name, "arguments": json.dumps(args)}
            self.raw.append(
                {
                    "role": "assistant",
                    "content": aside,
                    "tool_calls": [{"id": call_id, "type": "function", "function": function}],
                }
            )
            self.raw.append({"role": "tool", "tool_call_id": call_id, "content": result})
            return
        blocks: list[dict[str, Any]] = [{"type": "text", "text": aside}] if aside else []
        blocks.append({"type": "tool_use", "id": call_id, "name": name, "input": args})
        self.raw.append({"role": "assistant", "content": blocks})
        block = {"type": "tool_result", "tool_use_id": call_id, "content": result}
        self.raw.append({"role": "user", "content": [{**block, "is_error": error}]})

    def shell(self, command: str, output: str, code: int) -> None:
        if self.openai:
            framed = f"Process exited with code {code}\nOutput:\n{output}"
            self.call("exec_command", {"cmd": command}, framed)
        else:
            text = f"Exit code {code}\n{output}" if code else output
            self.call("Bash", {"command": command}, text, error=code != 0)

    def read(self, path: str) -> None:
        if self.openai:
            self.call("read_file", {"path": path}, _code(self.rng, self.rng.randint(80, 250)))
        else:
            self.call("Read", {"file_path": path}, _code(self.rng, self.rng.randint(80, 250)))

    def edit(self, path: str) -> None:
        old, new = self.rng.choice(NAMES), self.rng.choice(NAMES)
        if self.openai:
            patch = f"*** Begin Patch\n*** Update File: {path}\n@@\n-{old}\n+{new}\n*** End Patch"
            self.call("apply_patch", {"input": patch}, "Done!")
        else:
            args = {"file_path": path, "old_string": old, "new_string": new}
            self.call("Edit", args, f"The file {path} has been updated.")


def _path(openai: bool, module: str, part: str) -> str:
    path = f"src/{module}/{module}_{part}.py"  # file names differ across modules
    return path if openai else f"{ROOT}/{path}"


def session(seed: int, openai: bool) -> Raw:
    """One session: a task with constraints, then rounds of reading, editing and testing, with
    the user stepping in to correct course now and then."""
    s = _Session(seed, openai)
    rng = s.rng
    modules = rng.sample(MODULES, 5)
    s.user(
        f"Fix the rounding of invoice totals in the {modules[0]} module and add tests. "
        "Don't change the public API. Make sure the existing tests keep passing."
    )
    corrections = rng.sample(CORRECTIONS, rng.randint(5, 10))
    for step in range(rng.randint(80, 140)):
        module, part = rng.choice(modules), rng.choice(PARTS)
        test_file = f"tests/{module}/test_{part}.py"
        roll = rng.random()
        if roll < 0.25:  # reads range over the code base, edits stay in a few files
            s.read(_path(openai, rng.choice(MODULES), rng.choice(PARTS)))
        elif roll < 0.4:
            s.edit(_path(openai, modules[0] if rng.random() < 0.6 else modules[1], part))
        elif roll < 0.55:
            failed = rng.random() < 0.4
            output = _failure(rng, test_file) if failed else f"{rng.randint(3, 40)} passed"
            s.shell(f"python -m pytest {test_file} -q -k {rng.choice(NAMES)}", output, int(failed))
        elif roll < 0.7:
            symbol = rng.choice(NAMES)
            hits = "\n".join(
                f"src/{m}/{p}.py:{rng.randint(1, 300)}: {symbol} = 0"
                for m in rng.sample(MODULES, 3)
                for p in rng.sample(PARTS, 2)
            )
            s.shell(f"grep -rn '{symbol}' src/{module}", hits, 0)
        elif roll < 0.8:
            listing = "\n".join(f"{p}.py" for p in PARTS)
            s.shell(f"ls src/{module} | head -{rng.randint(5, 40)}", listing, 0)
        elif roll < 0.9:
            s.shell(f"git diff --stat src/{module}", f" src/{module}/{part}.py | 4 ++--", 0)
        elif corrections and step > 3:
            s.user(corrections.pop())
        else:
            s.shell(f"python -m mypy src/{module}/{part}.py", "Success: no issues found", 0)
    return s.raw


SEEDS = range(1, 7)


def _retention(counter: TiktokenCounter, ratio: int) -> dict[str, Counter[str]]:
    scores: dict[str, Counter[str]] = {"rule": Counter(), "one-line": Counter(), "total": Counter()}
    for seed in SEEDS:
        for openai in (False, True):
            raw = session(seed, openai)
            messages = to_messages(raw, counter)
            budget = sum(m.tokens for m in messages) // ratio
            summaries = {
                "rule": rule_summary(messages, None, budget, counter),
                "one-line": baseline_summary(raw, budget, counter),
            }
            for fact in ground_truth(raw).facts:
                scores["total"][fact.category] += 1
                for method, text in summaries.items():
                    scores[method][fact.category] += kept(fact, text)
    return scores


def _behind(counter: TiktokenCounter, ratio: int) -> dict[str, tuple[int, int, int]]:
    """Categories where `rule` keeps fewer facts than one line per tool call: kept, kept, all."""
    scores = _retention(counter, ratio)
    assert set(scores["total"]) == set(CATEGORIES)  # the sessions hold every kind of fact
    return {
        c: (scores["rule"][c], scores["one-line"][c], scores["total"][c])
        for c in CATEGORIES
        if scores["rule"][c] < scores["one-line"][c]
    }


def test_at_20x_rule_keeps_at_least_the_baseline_in_every_category(counter) -> None:
    assert _behind(counter, 20) == {}


def test_at_100x_rule_keeps_at_least_the_baseline_in_every_category(counter) -> None:
    # Files read were behind until files sharing a directory were listed on one line; commands
    # until a tight summary listed them without backticks (about 245 of 594 vs 263 before).
    assert _behind(counter, 100) == {}
