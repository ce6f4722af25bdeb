"""Incremental folding: merge with the previous summary, eviction under budget, determinism."""

from __future__ import annotations

import asyncio
import json
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from app.summarizers.base import SummaryRequest
from app.summarizers.rule import RuleSummarizer, rule_summary
from app.summarizers.rule.facts import Item
from app.summarizers.rule.parse import parse_summary
from app.summarizers.rule.render import fit, render
from app.tokens.counter import TiktokenCounter
from tests.summarizers.helpers import conversation

LLM_SUMMARY = """## Task Progress
Migrating the billing service to Stripe webhooks; 3 of 5 handlers done.

## Key Decisions
- Use idempotency keys stored in `webhook_events` instead of Redis locks.

## Errors & Solutions
1. `sqlalchemy.exc.IntegrityError: duplicate key value` — fixed by the unique index.
"""


def call(call_id: str, name: str, args: dict[str, Any], result: str) -> list[tuple[str, Any]]:
    return [
        ("assistant", [{"type": "tool_use", "id": call_id, "name": name, "input": args}]),
        ("user", [{"type": "tool_result", "tool_use_id": call_id, "content": result}]),
    ]


class TestMerge:
    def test_own_format_round_trips(self, counter) -> None:
        first = rule_summary(
            conversation(
                ("user", "Fix it. Never push to main."),
                *call("1", "edit_file", {"path": "a.py"}, "ok"),
                *call("2", "bash", {"command": "make"}, "error: boom\nexit code: 2"),
            ),
            None,
            2000,
            counter,
        )
        again = render(parse_summary(first).items())
        assert again == first

    def test_a_passing_command_is_listed_bare_and_read_back_as_passed(self) -> None:
        facts = parse_summary("Task: t\nCommands:\n- `make lint`\n- `pytest` → exit 1")
        commands = {i.text: i.status for i in facts.items() if i.kind == "command"}
        assert commands == {"make lint": "ok", "pytest": "exit 1"}
        assert "- `make lint`\n- `pytest` → exit 1" in render(facts.items())

    def test_a_tight_summary_lists_commands_without_backticks_and_reads_them_back(
        self, counter
    ) -> None:
        commands = [Item("command", f"make target{n}", n, "ok") for n in range(30)]
        commands.append(Item("command", "pytest -q", 30, "exit 1"))
        task = Item("task", "Go.", 0)
        budget = counter.count_text(render([task, *commands])) * 2 // 3
        text = fit([task, *commands], budget, counter)
        assert "- pytest -q → exit 1" in text and "- make target29" in text
        assert "`make" not in text  # two tokens a command saved: more commands are named
        kept = {i.text: i.status for i in parse_summary(text).items() if i.kind == "command"}
        assert kept["pytest -q"] == "exit 1" and kept["make target29"] == "ok"
        assert len(kept) == text.count("\n- ")

    def test_facts_are_deduplicated_across_folds(self, counter) -> None:
        fold = conversation(
            ("user", "Go. Never push to main."), *call("1", "read_file", {"path": "a.py"}, "x")
        )
        first = rule_summary(fold, None, 2000, counter)
        second = rule_summary(fold, first, 2000, counter)
        assert second.count("- Never push to main.") == 1
        assert second.count("- `a.py`") == 1

    def test_newest_wins_file_read_then_modified_later(self, counter) -> None:
        first = rule_summary(
            conversation(("user", "Go."), *call("1", "read_file", {"path": "a.py"}, "x")),
            None,
            2000,
            counter,
        )
        second = rule_summary(
            conversation(*call("2", "edit_file", {"path": "a.py"}, "ok")), first, 2000, counter
        )
        # Read-only files are listed without their tools, so the reader's name is not carried.
        assert "Files modified:\n- `a.py` (edit_file)" in second
        assert "Files read" not in second

    def test_previous_task_is_kept_and_not_replaced(self, counter) -> None:
        first = rule_summary(conversation(("user", "Build the importer.")), None, 2000, counter)
        second = rule_summary(conversation(("user", "Now write docs.")), first, 2000, counter)
        assert second.startswith("Task: Build the importer.")
        assert "Current focus: Now write docs." in second

    def test_llm_written_previous_summary_is_kept_as_context(self, counter) -> None:
        text = rule_summary(
            conversation(("user", "Continue with handler 4.")), LLM_SUMMARY, 2000, counter
        )
        assert "Earlier context:" in text
        assert "- Use idempotency keys stored in `webhook_events` instead of Redis locks." in text
        assert (
            "`sqlalchemy.exc.IntegrityError: duplicate key value` — fixed by the unique index."
            in text
        )
        assert "## " not in text  # headings are structure, not facts


class TestBudget:
    def test_lowest_value_items_go_first(self, counter) -> None:
        reads = [
            m for n in range(40) for m in call(f"r{n}", "read_file", {"path": f"src/m{n}.py"}, "x")
        ]
        items = [
            ("user", "Go. Never change the schema."),
            *reads,
            *call("e", "bash", {"command": "make"}, "error: boom\nexit 2"),
        ]
        text = rule_summary(conversation(*items), None, 120, counter)
        assert counter.count_text(text) <= 120
        assert "Task: Go. Never change the schema." in text
        assert "- Never change the schema." not in text  # the task line already says it
        assert "`error: boom`" in text
        assert "`src/m0.py`" not in text  # the oldest read was evicted first

    def test_a_fold_does_not_favour_the_sections_listed_last(self, counter) -> None:
        reads = "\n".join(f"- `src/m{n}.py`" for n in range(6))
        errors = "\n".join(
            f"- `ValueError: bad input number {n} in the parser` (from `make t{n}`)"
            f" → resolved: rerun succeeded"
            for n in range(6)
        )
        previous = f"Task: Go.\nFiles read:\n{reads}\nErrors (resolved):\n{errors}"
        orders = {i.text: i.order for i in parse_summary(previous)}
        # Each section's newest line is equally recent, whatever its place in the text.
        assert orders["src/m5.py"] == orders["ValueError: bad input number 5 in the parser"] == -1
        assert orders["src/m0.py"] < orders["src/m5.py"]
        half = rule_summary([], previous, counter.count_text(previous) // 2, counter)
        assert "- src/: " in half and "m5.py" in half and "number 5" in half  # one line

    def test_many_user_corrections_do_not_starve_the_commands(self, counter) -> None:
        corrections = [
            ("user", f"Never rename the field number {n} in the public schema of the service.")
            for n in range(30)
        ]
        commands = [
            m for n in range(30) for m in call(f"b{n}", "bash", {"command": f"make t{n}"}, "ok")
        ]
        items = [
            ("user", "Tidy the service."),
            *commands,
            *corrections,
        ]  # the corrections are newer
        text = rule_summary(conversation(*items), None, 300, counter)
        assert counter.count_text(text) <= 300
        assert "User constraints:" in text
        # Each section has a floor of the budget, though a command weighs far less.
        assert text.count("- make t") >= 3

    def test_at_a_tight_budget_errors_and_files_take_their_short_form(self, counter) -> None:
        ids = "".join(f"FAILED tests/test_totals.py::test_total_{n}\n" for n in range(8))
        result = f"E   AssertionError: totals differ\n{ids}8 failed, 9 passed"
        reads = [
            m for n in range(40) for m in call(f"r{n}", "read_file", {"path": f"src/m{n}.py"}, "x")
        ]
        items = [("user", "Go."), *call("e", "bash", {"command": "pytest"}, result), *reads]
        text = rule_summary(conversation(*items), None, 120, counter)
        # The message and the tally fit the error's short form; the eight test ids do not.
        assert (
            "- `E   AssertionError: totals differ | 8 failed, 9 passed …` (from `pytest`)" in text
        )
        assert "test_total_7" not in text
        edited = rule_summary(
            conversation(*items, *call("w", "edit_file", {"path": "src/m1.py"}, "ok")),
            None,
            120,
            counter,
        )
        assert "- src/m1.py\n" in edited  # which tool changed it is a luxury here
        full = rule_summary(conversation(*items), None, 4000, counter)
        assert (
            "totals differ | 8 failed, 9 passed | FAILED tests/test_totals.py::test_total_0" in full
        )
        assert "test_total_7" in full  # every failing test id, when the budget has room

    def test_when_items_are_evicted_long_commands_keep_their_head(self, counter) -> None:
        script = " ".join(f"--flag-{k}=value-{k}" for k in range(40))  # ~200 tokens each
        commands = [
            m
            for n in range(12)
            for m in call(f"c{n}", "bash", {"command": f"tool{n} run {script}"}, "ok")
        ]
        text = rule_summary(conversation(("user", "Go."), *commands), None, 300, counter)
        assert counter.count_text(text) <= 300
        heads = [line for line in text.splitlines() if line.startswith("- tool")]
        # Whole, one command would fit; as heads, most of them do, each a prefix of its command.
        assert len(heads) >= 6
        for line in heads:
            name = line[2:].split(" ", 1)[0]
            assert f"{name} run --flag-0=value-0" in line
        assert sum(line.endswith(" …") for line in heads) >= 5
        # With room for everything, no command is cut to its head.
        roomy = rule_summary(conversation(("user", "Go."), *commands), None, 4000, counter)
        whole = {
            line[3:].split(" ", 1)[0]: line
            for line in roomy.splitlines()
            if line.startswith("- `tool")
        }
        assert len(whole) == 12
        for line in heads:
            assert len(whole[line[2:].split(" ", 1)[0]]) > len(line)

    def test_left_over_budget_gives_a_cut_item_its_whole_text(self, counter) -> None:
        task = Item("task", "Go.", 0)
        command = Item("command", "deploy " + " ".join(f"--option-{k}" for k in range(30)), 1)
        deep = "/".join(f"dir{k}" for k in range(90))  # long items that are never cut
        files = [Item("file", f"/x{n}/{deep}/f.py", 2 + n, "modified") for n in range(3)]
        budget = counter.count_text(render([task, command, files[0]])) + 5
        text = fit([task, command, *files], budget, counter)
        # Not everything fits, so the command was cut to its head to make room; one file
        # fits beside it, the next does not, and the room left takes the command back whole.
        assert text.count("- /x") == 1
        assert f"- {command.text}" in text.splitlines()

    def test_tiny_budget_still_fits(self, counter) -> None:
        text = rule_summary(conversation(("user", "word " * 500)), None, 10, counter)
        assert 0 < counter.count_text(text) <= 10


_ROLES = st.sampled_from(["user", "assistant"])
_WORDS = st.sampled_from(
    [
        "Never",
        "use",
        "we'll",
        "instead",
        "of",
        "src/a.py",
        "Error:",
        "fail",
        "must",
        "?",
        ".",
        "\n",
        "x" * 30,
    ]
)
_TEXT = st.lists(_WORDS, min_size=1, max_size=40).map(" ".join)
_TOOL = st.tuples(
    st.sampled_from(["read_file", "edit_file", "bash", "frobnicate"]),
    st.sampled_from(["a.py", "src/b.ts", "make test", "cat x.md > y.md"]),
    st.sampled_from(
        [
            "ok",
            "error: bad\nexit code: 1",
            "exit code: 0",
            "Traceback (most recent call last):\nKeyError: 'k'",
        ]
    ),
)


@st.composite
def transcripts(draw: st.DrawFn) -> list[tuple[Any, ...]]:
    items: list[tuple[Any, ...]] = [("user", draw(_TEXT))]
    for n in range(draw(st.integers(0, 25))):
        if draw(st.booleans()):
            items.append((draw(_ROLES), draw(_TEXT)))
        else:
            name, arg, result = draw(_TOOL)
            args = {"command" if name == "bash" else "path": arg}
            if draw(st.booleans()):  # OpenAI shape
                function = {"name": name, "arguments": json.dumps(args)}
                items.append(
                    ("assistant", None, {"tool_calls": [{"id": f"c{n}", "function": function}]})
                )
                if draw(st.booleans()):  # sometimes still pending
                    items.append(("tool", result, {"tool_call_id": f"c{n}"}))
            else:
                items += call(f"c{n}", name, args, result)
    return items


class TestInvariants:
    @settings(
        max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
    )
    @given(items=transcripts(), budget=st.integers(1, 400), previous=st.none() | _TEXT)
    def test_never_exceeds_budget(self, counter: TiktokenCounter, items, budget, previous) -> None:
        result = asyncio.run(
            RuleSummarizer(counter).summarize(
                SummaryRequest(conversation(*items), previous, budget)
            )
        )
        assert result.tokens == counter.count_text(result.text) <= budget
        assert result.method == "rule"

    @settings(
        max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
    )
    @given(items=transcripts(), budget=st.integers(50, 400))
    def test_deterministic_and_stable_under_refold(
        self, counter: TiktokenCounter, items, budget
    ) -> None:
        messages = conversation(*items)
        first = rule_summary(messages, None, budget, counter)
        assert rule_summary(messages, None, budget, counter) == first
        refolded = rule_summary([], first, budget, counter)  # folding nothing new changes nothing
        assert counter.count_text(refolded) <= budget


class TestCompact:
    """At a tight budget: files of one directory on one line, errors by their head."""

    def _reads(self, count: int) -> list[Any]:
        return [
            m
            for n in range(count)
            for m in call(f"r{n}", "read_file", {"path": f"src/pkg/mod/m{n}.py"}, "x")
        ]

    def test_files_sharing_a_directory_are_listed_on_one_line(self, counter) -> None:
        items = [("user", "Go."), *self._reads(30)]
        full = rule_summary(conversation(*items), None, 4000, counter)
        assert "- `src/pkg/mod/m3.py`" in full  # everything fits: one line per file
        text = rule_summary(conversation(*items), None, 120, counter)
        line = next(x for x in text.splitlines() if x.startswith("- src/pkg/mod/: "))
        assert line.count(".py") > 10  # the directory named once for all of them
        # the same budget, one line per file, would hold far fewer
        assert text.count(".py") > full[: len(text)].count(".py")

    def test_a_compact_line_reads_back_file_by_file(self, counter) -> None:
        previous = (
            "Task: Go.\nWorking directory: /w\nFiles modified:\n"
            "- `lib/x/`: `a.ex` (Edit), `b.ex`\n- `c.ex` (Write)\nFiles read:\n- `/etc/`: `h`, `k`"
        )
        files = {(i.text, i.status, i.detail) for i in parse_summary(previous) if i.kind == "file"}
        assert files == {
            ("/w/lib/x/a.ex", "modified", "Edit"),
            ("/w/lib/x/b.ex", "modified", ""),
            ("/w/c.ex", "modified", "Write"),
            ("/etc/h", "read", ""),
            ("/etc/k", "read", ""),
        }
        # and a fold over it keeps them as items: nothing doubles
        again = rule_summary([], previous, 4000, counter)
        assert {i.text for i in parse_summary(again) if i.kind == "file"} == {
            f for f, _, _ in files
        }

    def test_a_tight_summary_writes_paths_and_commands_bare_where_they_read_back(self) -> None:
        items = [
            Item("task", "Go.", 0),
            Item("workdir", "/w", 0),
            Item("file", "/w/src/a.py", 1, "read"),
            Item("file", "/w/src/b.py", 2, "read"),
            Item("file", "/w/lone/c.py", 3, "read"),
            Item("file", "/w/my notes.md", 4, "read"),  # a space: kept in backticks
            Item("file", "/w/src/x,y.txt", 5, "read"),  # a comma would split a compact line
            Item("command", "echo a → b", 6, "ok"),  # the status marker: kept in backticks
            Item("command", "make check", 7, "exit 2"),
        ]
        text = render(items, compact=True)
        assert "- src/: a.py, b.py, `x,y.txt`\n- lone/c.py\n- `my notes.md`" in text
        assert "- `echo a → b`\n- make check → exit 2" in text
        listed = ("file", "command")
        parsed = {(i.kind, i.text, i.status) for i in parse_summary(text) if i.kind in listed}
        assert parsed == {(i.kind, i.text, i.status) for i in items if i.kind in listed}

    def test_a_tight_error_names_the_head_of_its_command(self, counter) -> None:
        command = "pytest " + " ".join(f"tests/test_{n}.py" for n in range(20))
        result = "E   ValueError: " + "bad " * 40
        items = [("user", "Go."), *call("e", "bash", {"command": command}, result)]
        items += self._reads(30)
        text = rule_summary(conversation(*items), None, 150, counter)
        line = next(x for x in text.splitlines() if x.startswith("- `E   ValueError"))
        assert "(from `pytest tests/test_0" in line and "tests/test_19.py" not in line
        assert counter.count_text(line) < 40

    def test_an_item_too_long_for_what_is_left_does_not_keep_the_rest_out(self, counter) -> None:
        task = Item("task", "Go.", 0)
        deep = "/".join(f"dir{k}" for k in range(90))
        long_file = Item("file", f"/x/{deep}/f.py", 9, "modified")
        commands = [Item("command", f"ls d{n}", 1 + n, "ok") for n in range(5)]
        budget = counter.count_text(render([task, *commands])) + 5
        text = fit([task, long_file, *commands], budget, counter)
        assert "dir89" not in text and text.count("- ls d") == 5

    def test_carried_over_summary_only_fills_what_is_left(self, counter) -> None:
        carried = "\n".join(
            f"- Earlier narrative line number {n} about the work." for n in range(8)
        )
        commands = "\n".join(f"- `make target{n}`" for n in range(40))
        previous = f"Task: Go.\nCommands:\n{commands}\nEarlier summary:\n{carried}"
        text = rule_summary([], previous, counter.count_text(previous) // 3, counter)
        assert text.count("- make target") < 40  # commands are evicted...
        assert "Earlier summary:" not in text  # ...so no room is reserved for the narrative

    def test_an_error_named_by_its_commands_head_is_resolved_in_a_later_fold(self, counter) -> None:
        command = "pytest tests/test_alpha.py tests/test_beta.py tests/test_gamma.py -q"
        failing = call("e", "bash", {"command": command}, "E   ValueError: bad\nexit code: 1")
        items = [("user", "Go."), *failing, *self._reads(30)]
        first = rule_summary(conversation(*items), None, 200, counter)
        assert "(from `pytest tests/test_" in first and "test_gamma.py -q`)" not in first
        assert f"- {command} → exit 1" in first  # the command itself is listed whole
        passing = call("p", "bash", {"command": command}, "20 passed\nexit code: 0")
        second = rule_summary(conversation(*passing), first, 400, counter)
        assert "Errors (open):" not in second
        assert "→ resolved: rerun succeeded" in second
