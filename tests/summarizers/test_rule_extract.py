"""The rule extractor: one test per fact kind and per tool shape (Anthropic and OpenAI)."""

from __future__ import annotations

from typing import Any

from app.summarizers.rule import rule_summary
from app.summarizers.rule.outcomes import exit_code, first_error_line
from app.summarizers.rule.tools import classify_call
from app.tokens.counter import TiktokenCounter
from tests.summarizers.helpers import conversation
from tests.summarizers.rule_helpers import anthropic_call, openai_call

BIG = 4000


def summarize(counter: TiktokenCounter, *items: Any, previous: str | None = None) -> str:
    return rule_summary(conversation(*items), previous, BIG, counter)


class TestConversationFacts:
    def test_task_is_the_first_user_request(self, counter) -> None:
        text = summarize(
            counter, ("user", "Port the CLI to click."), ("user", "Also add --verbose.")
        )
        assert text.startswith("Task: Port the CLI to click.")
        assert "User requests:\n- Also add --verbose." in text

    def test_user_constraints(self, counter) -> None:
        text = summarize(
            counter,
            (
                "user",
                "Refactor the parser. Don't touch `legacy/io.py`. "
                "Make sure Python 3.11 still works.",
            ),
            ("user", "Only use modules that ship with Python."),
        )
        for phrase in (
            "Don't touch `legacy/io.py`.",
            "Make sure Python 3.11 still works.",
            "Only use modules that ship with Python.",
        ):
            assert f"- {phrase}" in text

    def test_decisions_from_either_side(self, counter) -> None:
        text = summarize(
            counter,
            ("user", "Speed up the export."),
            ("assistant", "We'll use orjson instead of json for the encoder. Looking at it now."),
        )
        assert "Decisions:\n- We'll use orjson instead of json for the encoder." in text

    def test_explicit_decision_wins_over_constraint_words(self, counter) -> None:
        text = summarize(
            counter,
            ("user", "Speed up the export."),
            ("user", "We decided to keep the old client as a fallback."),
        )
        assert "Decisions:\n- We decided to keep the old client as a fallback." in text
        assert "User constraints:" not in text

    def test_unanswered_question_is_open_answered_one_is_not(self, counter) -> None:
        text = summarize(
            counter,
            ("user", "Fix the bug. Is the cache shared between workers?"),
            ("assistant", "It is per process. Should I make it shared?"),
        )
        assert "Open questions:\n- assistant: Should I make it shared?" in text
        assert "Is the cache shared" not in text.split("Open questions:")[1]

    def test_current_focus_is_last_request_and_last_action(self, counter) -> None:
        items = [
            ("user", "Fix the bug."),
            ("user", "Now add a changelog entry."),
            *anthropic_call("t1", "edit_file", {"path": "CHANGELOG.md"}, "ok"),
        ]
        text = summarize(counter, *items)
        assert text.endswith(
            "Current focus: Now add a changelog entry. (last step: edit_file `CHANGELOG.md`)"
        )

    def test_user_pasted_traceback_is_an_open_error(self, counter) -> None:
        paste = (
            "It crashes:\nTraceback (most recent call last):\n"
            "  File \"a.py\", line 1\nKeyError: 'user_id'"
        )
        text = summarize(counter, ("user", paste))
        assert "- `KeyError: 'user_id'` (from `reported by user`)" in text


class TestToolShapes:
    def test_anthropic_read_then_edit_is_modified(self, counter) -> None:
        items = [
            ("user", "Go."),
            *anthropic_call("a", "read_file", {"path": "src/app.py"}, "code"),
            *anthropic_call(
                "b", "str_replace", {"path": "src/app.py", "old_str": "a", "new_str": "b"}, "ok"
            ),
        ]
        text = summarize(counter, *items)
        assert "Files modified:\n- `src/app.py` (str_replace)" in text
        assert "Files read:" not in text

    def test_openai_write_of_new_file_is_created(self, counter) -> None:
        items = [
            ("user", "Go."),
            *openai_call(
                "c", "write_file", {"file_path": "docs/new.md", "content": "x"}, "written"
            ),
        ]
        assert "Files created:\n- `docs/new.md` (write_file)" in summarize(counter, *items)

    def test_text_editor_tool_commands(self) -> None:
        view = classify_call(
            "1", "str_replace_based_edit_tool", {"command": "view", "path": "a.py"}
        )
        create = classify_call("2", "str_replace_editor", {"command": "create", "path": "b.py"})
        assert (view.files, create.files) == ((("a.py", "read"),), (("b.py", "created"),))

    def test_apply_patch_files(self) -> None:
        patch = (
            "*** Begin Patch\n*** Update File: app/x.py\n@@\n-a\n+b\n"
            "*** Add File: app/y.py\n+new\n*** End Patch"
        )
        use = classify_call("1", "apply_patch", {"input": patch})
        assert use.files == (("app/x.py", "modified"), ("app/y.py", "created"))

    def test_shell_reads_and_writes(self) -> None:
        use = classify_call(
            "1", "bash", {"command": "cat setup.cfg && sed -i 's/a/b/' src/conf.py > out.log"}
        )
        assert ("setup.cfg", "read") in use.files
        assert ("src/conf.py", "modified") in use.files
        assert ("out.log", "written") in use.files
        assert use.command == "cat setup.cfg && sed -i 's/a/b/' src/conf.py > out.log"

    def test_editing_helpers_called_from_code(self) -> None:
        code = (
            "open_file('/repo/src/views.py', 40)\n"
            "edit_file_by_replace(\n    '/repo/src/views.py',\n    to_replace='a',\n"
            "    new_content='b',\n)\n"
            'create_file(filename="/repo/tests/test_views.py")\n'
            "append_file(file_name='/repo/tests/test_views.py', content='x = 1')\n"
            "insert_content_at_line('/repo/README.md', 3, 'note')\n"
            "search_file('TODO', '/repo/src/models.py')\n"
            "print('done.txt')"
        )
        use = classify_call("1", "run_ipython", {"code": code})
        assert use.files == (
            ("/repo/src/views.py", "modified"),
            ("/repo/tests/test_views.py", "created"),
            ("/repo/README.md", "modified"),
        )
        assert classify_call("2", "execute_ipython_cell", {"code": "print(1 + 1)"}).files == ()

    def test_editing_helper_in_a_run_result_is_a_modified_file(self, counter) -> None:
        text = summarize(
            counter,
            ("user", "Fix the pagination bug in the list view."),
            *openai_call(
                "c1",
                "run_ipython",
                {"code": "edit_file_by_replace('app/list.py', to_replace='1', new_content='0')"},
                "[File: /repo/app/list.py (80 lines total after edit)]",
            ),
        )
        assert "Files modified:\n- `app/list.py` (run_ipython)" in text

    def test_unknown_tools_by_verb_and_path_like_arguments(self) -> None:
        fetch = classify_call("1", "fetchDocument", {"location": "notes/plan.txt"})
        update = classify_call("2", "update_config", {"target": "config/app.yaml", "value": 3})
        remove = classify_call("3", "fs.delete", {"path": "tmp/cache.db"})
        assert fetch.files == (("notes/plan.txt", "read"),)
        assert update.files == (("config/app.yaml", "modified"),)
        assert remove.files == (("tmp/cache.db", "modified"),)

    def test_command_tool_names(self) -> None:
        for name, args in [
            ("run_command", {"cmd": "make test"}),
            ("execute", {"command": "make test"}),
            ("shell", {"input": "make test"}),
            ("terminal", {"commands": ["make", "test"]}),
        ]:
            assert classify_call("1", name, args).command is not None, name


class TestCommandsAndErrors:
    def test_exit_codes(self) -> None:
        assert exit_code("...\nexit code: 1") == 1
        assert exit_code("Exit status 2") == 2
        assert exit_code("Command 'x' returned non-zero exit status 3.") == 3
        assert exit_code("Process exited with code 127") == 127
        assert exit_code("all good") is None

    def test_first_error_lines(self) -> None:
        trace = (
            'Traceback (most recent call last):\n  File "m.py", line 3, in <module>\n'
            "    f()\nValueError: bad port 99999"
        )
        assert first_error_line(trace) == "ValueError: bad port 99999"
        assert (
            first_error_line("collected 3\nE       AssertionError: assert 2 == 3\nFAILED t.py::x")
            == "E       AssertionError: assert 2 == 3"
        )
        assert (
            first_error_line("Compiling\nError: Cannot find module 'left-pad'")
            == "Error: Cannot find module 'left-pad'"
        )
        assert (
            first_error_line("src/a.ts(3,5): error TS2322: Type 'x'")
            == "src/a.ts(3,5): error TS2322: Type 'x'"
        )
        assert first_error_line("all 12 tests passed") is None

    def test_failed_command_then_fix_then_pass_is_resolved(self, counter) -> None:
        items = [
            ("user", "Fix it."),
            *anthropic_call(
                "1",
                "bash",
                {"command": "pytest -q"},
                "E   AssertionError: assert 2 == 3\nexit code: 1",
            ),
            *anthropic_call("2", "edit_file", {"path": "src/calc.py"}, "ok"),
            *anthropic_call("3", "bash", {"command": "pytest -q"}, "3 passed\nexit code: 0"),
        ]
        text = summarize(counter, *items)
        assert "Errors (open):" not in text
        assert (
            "- `E   AssertionError: assert 2 == 3` (from `pytest -q`) → resolved: "
            "rerun succeeded after editing `src/calc.py`"
        ) in text
        assert "- `pytest -q`\n" in text  # exit 0: it passed, listed bare

    def test_is_error_result_without_error_words(self, counter) -> None:
        items = [
            ("user", "Go."),
            *anthropic_call("1", "read_file", {"path": "nope.txt"}, "not found", is_error=True),
        ]
        text = summarize(counter, *items)
        assert "Errors (open):\n- `not found` (from `read_file nope.txt`)" in text
        assert "Files read" not in text  # the read failed

    def test_error_fixed_in_a_later_fold(self, counter) -> None:
        first = summarize(
            counter,
            ("user", "Fix."),
            *openai_call("1", "bash", {"command": "make"}, "error: x\nexit code: 2"),
        )
        assert "Errors (open):\n- `error: x` (from `make`)" in first
        second = rule_summary(
            conversation(*openai_call("2", "bash", {"command": "make"}, "exit code: 0")),
            first,
            BIG,
            counter,
        )
        assert (
            "Errors (resolved):\n- `error: x` (from `make`) → resolved: rerun succeeded" in second
        )
        assert "Errors (open)" not in second

    def test_pending_call_is_recorded(self, counter) -> None:
        text = summarize(
            counter,
            ("user", "Deploy."),
            (
                "assistant",
                [
                    {
                        "type": "tool_use",
                        "id": "z",
                        "name": "bash",
                        "input": {"command": "make deploy"},
                    }
                ],
            ),
        )
        assert "- `make deploy` → pending" in text
