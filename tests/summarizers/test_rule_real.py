"""Regressions seen on real agent transcripts (excerpts rewritten in our own words): failures
and their resolution, paths, the budget. Harness text: test_rule_harness.py.

The last class runs the summarizer over the real-transcript corpus in `../shared/` when it is
present (skipped otherwise) and checks what must never happen on real input.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from app.summarizers.rule import rule_summary
from app.summarizers.rule.extract import extract
from app.summarizers.rule.facts import Facts
from app.summarizers.rule.outcomes import error_lines
from app.summarizers.rule.parse import parse_summary
from app.summarizers.rule.paths import relative
from app.summarizers.rule.render import item_line
from app.tokens.counter import TiktokenCounter
from tests.summarizers.helpers import conversation
from tests.summarizers.rule_helpers import BIG, anthropic_call, openai_call, section, summarize

CORPUS = Path(__file__).resolve().parents[3] / "shared" / "real-transcripts"


class TestFailures:
    PYTEST = (
        "Exit code 1\n"
        "___ test_flow ___\n"
        "E       AssertionError: assert 'flowing' == 'flow'\n"
        "E         - flowing\n"
        "E         + flow\n"
        "FAILED tests/test_text.py::test_flow - AssertionError\n"
        "FAILED tests/test_text.py::test_wrap - KeyError: 'width'\n"
        "========= 7 failed, 54 passed in 2.31s =========\n"
    )

    def test_pytest_failure_keeps_assertion_failed_ids_and_tally(self) -> None:
        assert error_lines(self.PYTEST) == [
            "E       AssertionError: assert 'flowing' == 'flow'",
            "7 failed, 54 passed in 2.31s",
            "FAILED tests/test_text.py::test_flow - AssertionError",
            "FAILED tests/test_text.py::test_wrap - KeyError: 'width'",
        ]

    def test_pytest_location_and_every_failing_id(self) -> None:
        ids = [f"FAILED tests/test_cart.py::test_total_{n} - assert 3 == 4" for n in range(5)]
        run = (
            "Exit code 1\n"
            "    def test_total_0():\n"
            ">       assert total([1, 2]) == 4\n"
            "E       assert 3 == 4\n"
            "E        +  where 3 = total([1, 2])\n"
            "tests/test_cart.py:7: AssertionError\n" + "\n".join(ids) + "\n5 failed in 0.2s\n"
        )
        assert error_lines(run) == [
            "E       assert 3 == 4",
            "tests/test_cart.py:7: AssertionError",
            "5 failed in 0.2s",
            *ids,
        ]

    def test_traceback_frame_is_the_location(self) -> None:
        run = (
            "Traceback (most recent call last):\n"
            '  File "app/cli.py", line 12, in <module>\n'
            '  File "app/loader.py", line 40, in load\n'
            "ModuleNotFoundError: No module named 'yaml'\n"
        )
        assert error_lines(run)[:2] == [
            "ModuleNotFoundError: No module named 'yaml'",
            'File "app/loader.py", line 40, in load',
        ]

    def test_exunit_failure_keeps_assertion_location_comparison_and_test(self) -> None:
        run = (
            "Exit code 2\nCompiling 2 files (.ex)\n"
            "  1) test index lists open items (Shop.ItemLiveTest)\n"
            "     test/shop_web/item_live_test.exs:41\n"
            "     Assertion with =~ failed\n"
            '     code:  assert html =~ "Open items"\n'
            '     left:  "<html>…</html>"\n'
            "9 tests, 1 failure\n"
        )
        assert error_lines(run) == [
            "Assertion with =~ failed",
            "test/shop_web/item_live_test.exs:41",
            "9 tests, 1 failure",
            'code:  assert html =~ "Open items"',
            "1) test index lists open items (Shop.ItemLiveTest)",
        ]

    def test_vitest_failure_keeps_its_file_location_and_both_tallies(self) -> None:
        run = (
            " FAIL  src/config.test.ts > defaults > sets the threshold to 90%\n"
            "AssertionError: expected undefined to deeply equal { auto: true }\n"
            " ❯ src/config.test.ts:53:33\n"
            " Test Files  1 failed (1)\n"
            "      Tests  1 failed | 15 skipped (16)\n"
        )
        assert error_lines(run) == [
            "AssertionError: expected undefined to deeply equal { auto: true }",
            "❯ src/config.test.ts:53:33",
            "Test Files  1 failed (1)",
            "Tests  1 failed | 15 skipped (16)",
            "FAIL  src/config.test.ts > defaults > sets the threshold to 90%",
        ]

    def test_a_second_error_of_one_result_is_kept(self) -> None:
        run = (
            "Exit code 2\nrg: x/a: No such file or directory\nrg: lib/b: No such file or directory"
        )
        assert error_lines(run) == [
            "rg: x/a: No such file or directory",
            "rg: lib/b: No such file or directory",
        ]

    def test_a_result_without_an_error_line_keeps_its_first_line_and_location(self) -> None:
        run = "Exit code 1\nPre-commit validation failed: [DIALYZER]\nlib/a.ex:57:13:pattern_match"
        assert error_lines(run) == [
            "Pre-commit validation failed: [DIALYZER]",
            "lib/a.ex:57:13:pattern_match",
        ]

    def test_tight_budget_keeps_the_command_message_and_location(self, counter) -> None:
        ids = "".join(f"FAILED tests/test_cart.py::test_total_{n}\n" for n in range(9))
        run = f"E   KeyError: 'sku'\ntests/test_cart.py:31: KeyError\n{ids}9 failed in 1s"
        read = [anthropic_call(f"r{n}", "read_file", {"path": f"m{n}.py"}, "x") for n in range(60)]
        failing = anthropic_call("e", "bash", {"command": "pytest -x"}, run, is_error=True)
        items = [("user", "Go."), *failing, *(m for pair in read for m in pair)]
        text = rule_summary(conversation(*items), None, 150, counter)
        error = section(text, "Errors (open):")
        assert "E   KeyError: 'sku' | tests/test_cart.py:31: KeyError" in error
        assert "(from `pytest -x`)" in error
        full = rule_summary(conversation(*items), None, 5000, counter)
        assert all(f"test_total_{n}" in full for n in range(9))

    def test_conftest_import_error_keeps_its_headline_location_and_cause(self) -> None:
        run = (
            "Exit code 4\n"
            "ImportError while loading conftest '/repo/tests/conftest.py'.\n"
            "tests/conftest.py:3: in <module>\n"
            "    from app.main import create_app\n"
            "E   ModuleNotFoundError: No module named 'fastapi'\n"
        )
        assert error_lines(run) == [
            "ImportError while loading conftest '/repo/tests/conftest.py'.",
            "tests/conftest.py:3: in <module>",
            "E   ModuleNotFoundError: No module named 'fastapi'",
        ]

    def test_an_api_error_body_is_the_error(self) -> None:
        body = '{"detail": "upstream failed: Error code: 400 - max_tokens: 9000 > 8192"}'
        assert error_lines(f"HTTP/1.1 502 Bad Gateway\n{body}") == [body]

    def test_framing_lines_are_not_the_error(self) -> None:
        codex = "Chunk ID: 1f\nWall time: 0.1 seconds\nProcess exited with code 1\nOutput:\n"
        assert error_lines(codex) == ["Process exited with code 1"]
        assert error_lines("Exit code 2\nmodule Foo is not available") == [
            "module Foo is not available"
        ]

    def test_missing_file_error_resolved_when_the_file_is_written(self, counter) -> None:
        text = summarize(
            counter,
            ("user", "Document the plugin."),
            *anthropic_call(
                "1",
                "Read",
                {"file_path": "/p/docs/plugin.md"},
                "<tool_use_error>File does not exist.</tool_use_error>",
                is_error=True,
            ),
            *anthropic_call("2", "Write", {"file_path": "/p/docs/plugin.md", "content": "x"}, "ok"),
        )
        assert "Errors (open):" not in text
        assert "`Write /p/docs/plugin.md` succeeded" in section(text, "Errors (resolved):")

    @staticmethod
    def _read_missing_then_tail(counter: TiktokenCounter, tailed: str) -> str:
        missing = "<tool_use_error>File does not exist.</tool_use_error>"
        return summarize(
            counter,
            ("user", "Check the background job."),
            *anthropic_call(
                "1", "Read", {"file_path": "/tmp/job/b0.output"}, missing, is_error=True
            ),
            *anthropic_call("2", "Bash", {"command": f"tail -20 {tailed}"}, "done"),
        )

    def test_missing_file_error_resolved_when_the_file_is_read_later(self, counter) -> None:
        text = self._read_missing_then_tail(counter, "/tmp/job/b0.output")
        assert "Errors (open):" not in text
        resolved = section(text, "Errors (resolved):")
        assert "(from `Read /tmp/job/b0.output`) → resolved: `tail -20" in resolved

    def test_reading_another_file_does_not_resolve_a_missing_file(self, counter) -> None:
        text = self._read_missing_then_tail(counter, "/tmp/job/b1.output")
        assert "(from `Read /tmp/job/b0.output`)" in section(text, "Errors (open):")

    def test_broader_test_run_passing_resolves_a_narrow_failure(self, counter) -> None:
        text = summarize(
            counter,
            ("user", "Fix the live view test."),
            *anthropic_call(
                "1",
                "Bash",
                {"command": "mix test test/live_test.exs 2>&1"},
                "Exit code 2\n** (RuntimeError) lazy_html missing\n5 tests, 5 failures",
                is_error=True,
            ),
            *anthropic_call(
                "2", "Bash", {"command": "mix test 2>&1 | tail -5"}, "70 tests, 0 failures"
            ),
        )
        resolved = section(text, "Errors (resolved):")
        assert "** (RuntimeError) lazy_html missing | 5 tests, 5 failures" in resolved
        assert "`mix test 2>&1 | tail -5` succeeded" in resolved

    def test_piped_test_run_reporting_failures_is_a_failure(self, counter) -> None:
        text = summarize(
            counter,
            ("user", "Run the suite."),
            *anthropic_call(
                "1",
                "Bash",
                {"command": "mix test 2>&1 | tail -3"},
                "Finished in 1.2 seconds\n61 tests, 7 failures",
            ),
        )
        assert "- `mix test 2>&1 | tail -3` → failed" in text
        assert "- `61 tests, 7 failures`" in section(text, "Errors (open):")

    def test_codex_polled_output_belongs_to_its_command(self, counter) -> None:
        text = summarize(
            counter,
            ("user", "Build it."),
            *openai_call(
                "1",
                "exec_command",
                {"cmd": "npm run build"},
                "Process running with session ID 4242",
            ),
            *openai_call(
                "2",
                "write_stdin",
                {"session_id": 4242, "chars": ""},
                "Process exited with code 2\nOutput:\nerror TS2304: Cannot find name 'x'.",
            ),
        )
        assert "- `npm run build` → exit 2" in text
        assert "(from `npm run build`)" in section(text, "Errors (open):")

    def test_heredoc_python_does_not_create_files(self, counter) -> None:
        script = "python3 - <<'EOF'\nimport json\nprint('Linked') > open('x')\nEOF"
        commit = "git commit -m \"$(cat <<'EOF'\nconst x\nEOF\n)\""
        text = summarize(
            counter,
            ("user", "Check the data."),
            *anthropic_call("1", "Bash", {"command": script}, "Linked"),
            *anthropic_call("2", "Bash", {"command": commit}, "[main 1a2b] x"),
        )
        assert "Files created:" not in text and "Files modified:" not in text

    def test_swe_agent_edit_changes_the_open_file(self, counter) -> None:
        text = summarize(
            counter,
            ("user", "Fix the handler."),
            *openai_call("1", "bash", {"command": "open src/handler.py 290"}, "[File: …]"),
            *openai_call("2", "bash", {"command": "edit 287:295\n    return x\nend_of_edit"}, "ok"),
            *openai_call("3", "open", {"path": "src/util.py"}, "[File: …]"),
            *openai_call("4", "edit", {"search": "a = 1", "replace": "a = 2"}, "ok"),
        )
        assert "- `src/handler.py` (bash)" in section(text, "Files modified:")
        assert "- `src/util.py` (edit)" in section(text, "Files modified:")


class TestPathsAndBudget:
    def test_paths_under_the_working_directory_are_relative(self, counter) -> None:
        root = "/home/dev/projects/shop"
        items: list[Any] = [("user", "Tidy the models.")]
        for n, name in enumerate(("lib/a.ex", "lib/b.ex", "test/a_test.exs")):
            items += anthropic_call(str(n), "Edit", {"file_path": f"{root}/{name}"}, "ok")
        text = summarize(counter, *items)
        assert f"Working directory: {root}\n" in text
        assert "- `lib/b.ex` (Edit)" in text and f"`{root}/lib/b.ex`" not in text

    def test_relative_and_absolute_forms_are_one_file(self, counter) -> None:
        root = "/home/dev/projects/shop"
        text = summarize(
            counter,
            ("user", "Tidy the models."),
            *anthropic_call("1", "Read", {"file_path": f"{root}/lib/a.ex"}, "x"),
            *anthropic_call("2", "Bash", {"command": "cat lib/b.ex"}, "y"),
            *anthropic_call("3", "Edit", {"file_path": f"{root}/lib/b.ex"}, "ok"),
            *anthropic_call("4", "Bash", {"command": "head lib/a.ex"}, "x"),
            *anthropic_call("5", "Grep", {"pattern": "def ", "path": f"{root}/lib"}, "a.ex:1"),
        )
        assert section(text, "Files read:") == "- `lib/a.ex`"
        assert section(text, "Files modified:") == "- `lib/b.ex` (Edit)"  # a read names no tool

    def test_relative_paths_merge_with_absolute_ones_in_the_next_fold(self, counter) -> None:
        root = "/home/dev/projects/shop"
        first = summarize(
            counter,
            ("user", "Tidy the models."),
            *anthropic_call("1", "Edit", {"file_path": f"{root}/lib/a.ex"}, "ok"),
            *anthropic_call("2", "Edit", {"file_path": f"{root}/lib/b.ex"}, "ok"),
        )
        files = [i.text for i in parse_summary(first) if i.kind == "file"]
        assert files == [f"{root}/lib/a.ex", f"{root}/lib/b.ex"]
        second = rule_summary(
            conversation(*anthropic_call("3", "Edit", {"file_path": f"{root}/lib/a.ex"}, "ok")),
            first,
            BIG,
            counter,
        )
        files = [i.text for i in parse_summary(second) if i.kind == "file"]
        assert files == [f"{root}/lib/b.ex", f"{root}/lib/a.ex"]  # one item each

    def test_budget_left_over_is_filled_with_shorter_items(self, counter) -> None:
        long_error = "error: widget factory failed at " + " ".join(f"frame{n}" for n in range(150))
        items: list[Any] = [("user", "Fix the build.")]
        items += anthropic_call("e", "Bash", {"command": "make"}, long_error, is_error=True)
        for n in range(12):
            items += anthropic_call(f"c{n}", "Bash", {"command": f"ls dir{n}"}, "ok")
        text = summarize(counter, *items, budget=100)
        assert counter.count_text(text) <= 100
        assert "frame149" not in text  # too long for this budget: its head at most
        assert section(text, "Commands:").count("- ls dir") >= 5


@pytest.mark.skipif(not CORPUS.is_dir(), reason="real-transcript corpus not available")
class TestCorpus:
    HARNESS_MARKERS = (
        "<system-reminder>",
        "Caveat: The messages",
        "[Request interrupted",
        "<command-name>",
        "<task-notification>",
        "Tokens: ",
        "(Y)es/(N)o",
    )

    @pytest.mark.parametrize("path", sorted(CORPUS.glob("*.json")) if CORPUS.is_dir() else [])
    def test_real_transcript_at_one_twentieth(self, counter, path: Path) -> None:
        from app.services.summarize_context import to_messages

        messages = to_messages(json.loads(path.read_text("utf-8"))["messages"], counter)
        budget = sum(m.tokens for m in messages) // 20
        text = rule_summary(messages, None, budget, counter)
        assert counter.count_text(text) <= budget
        people = [
            text.splitlines()[0],
            section(text, "User requests:"),
            section(text, "User constraints:"),
            text.splitlines()[-1],
        ]
        for marker in self.HARNESS_MARKERS:
            assert not any(marker in part for part in people), (marker, path.stem)
        created = section(text, "Files created:") + section(text, "Files modified:")
        assert "`EOF`" not in created and "`const`" not in created

    @pytest.mark.parametrize("ratio", [20, 100])
    @pytest.mark.parametrize("path", sorted(CORPUS.glob("*.json")) if CORPUS.is_dir() else [])
    def test_no_budget_left_while_anything_that_scores_is_evicted(
        self, counter, path: Path, ratio: int
    ) -> None:
        from app.services.summarize_context import to_messages

        messages = to_messages(json.loads(path.read_text("utf-8"))["messages"], counter)
        budget = sum(m.tokens for m in messages) // ratio
        text = rule_summary(messages, None, budget, counter)
        facts = Facts()
        extract(messages, facts)
        workdir = facts.get("workdir")
        where = workdir.text if workdir else None
        left = budget - counter.count_text(text)
        for item in facts.items():
            line = item_line(item, where, compact=True)
            # At a tight budget a command or error may be named by its head (` …`), a command
            # or path without backticks, a file by its name on its directory's line.
            if item.kind in ("command", "error"):
                head = item.text.split(" | ")[0][:24]
                named = f"`{head}" in text or f"- {head}" in text
            elif item.kind == "file":
                named = relative(item.text, where).rsplit("/", 1)[-1] in text
            elif item.kind in ("constraint", "request", "decision"):
                named = item.text[:24] in text
            else:
                continue
            if not named:
                # its line (+ newline, + a section header at most) would not have fitted
                assert counter.count_text(line) + 6 > left, (path.stem, line)
            elif item.kind == "error" and item.text not in text:
                # cut to its short form: the whole error would not have fitted either
                assert counter.count_text(item.text) > left, (path.stem, item.text)
