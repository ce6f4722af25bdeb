"""The real-transcript benchmark's ground truth and matching rule (evals/real_facts.py)."""

from __future__ import annotations

from typing import Any

from evals.next_step import asked
from evals.real_facts import Fact, ground_truth, informative_lines, kept, key


def use(call_id: str, name: str, args: dict[str, Any]) -> dict[str, Any]:
    return {"role": "assistant", "content": [{"type": "tool_use", "id": call_id, "name": name,
                                              "input": args}]}  # fmt: skip


def result(call_id: str, text: str, is_error: bool = False) -> dict[str, Any]:
    block = {"type": "tool_result", "tool_use_id": call_id, "content": text, "is_error": is_error}
    return {"role": "user", "content": [block]}


TRANSCRIPT = [
    {"role": "user", "content": [
        {"type": "text", "text": "<system-reminder>You must never do X.</system-reminder>"},
        {"type": "text", "text": "Fix the parser. Don't touch the public API."},
    ]},
    use("1", "Read", {"file_path": "/p/src/parse.py"}),
    result("1", "     1→def parse(): ..."),
    use("2", "Edit", {"file_path": "/p/src/lexer.py", "old_string": "a", "new_string": "b"}),
    result("2", "The file has been updated."),
    use("3", "Bash", {"command": "pytest -q 2>&1 | tail -3"}),
    result("3", "Exit code 1\nE   AssertionError: assert 1 == 2\n1 failed, 3 passed", True),
    use("4", "Bash", {"command": "git status"}),
    result("4", "On branch main"),
]  # fmt: skip


class TestGroundTruth:
    def test_categories_come_from_tool_arguments_results_and_user_words(self) -> None:
        facts = {(f.category, tuple(f.keys), f.failed) for f in ground_truth(TRANSCRIPT).facts}
        assert facts == {
            ("read_file", ("parse py",), False),
            ("modified_file", ("lexer py",), False),
            ("command", ("pytest q 2 1 tail 3",), True),
            ("command", ("git status",), False),
            ("error", ("e assertionerror assert 1 2", "1 failed 3 passed"), False),
            ("constraint", ("don t touch the public api",), False),
        }

    def test_each_informative_line_of_a_failure_is_a_line_fact(self) -> None:
        lines = [f.keys for f in ground_truth(TRANSCRIPT).lines]
        assert lines == [["e assertionerror assert 1 2"], ["1 failed 3 passed"]]

    def test_informative_lines_skip_framing(self) -> None:
        assert informative_lines("Chunk ID: 9\nWall time: 1s\nProcess exited with code 1\n") == [
            "Process exited with code 1"
        ]

    def test_a_line_of_markup_tags_alone_is_not_a_user_sentence(self) -> None:
        template = (
            "Run the release checklist.\n"
            '<steps CRITICAL="TRUE">\n'
            "1. Make sure the changelog names every change.\n"
            "</steps>"
        )
        facts = ground_truth([{"role": "user", "content": [{"type": "text", "text": template}]}])
        assert [f.keys for f in facts.facts] == [["make sure the changelog names every change"]]


class TestMatching:
    def test_keys_are_whole_words(self) -> None:
        long = "git log --oneline master..HEAD 2>/dev/null || echo 'No divergence from master'"
        assert key(long) == "git log oneline master head 2 dev null echo no"

    def test_a_fact_is_kept_on_word_boundaries(self) -> None:
        fact = Fact("read_file", ["app js"])
        assert kept(fact, "- `assets/app.js` (Read)")
        assert not kept(fact, "- `assets/happ.js`")

    def test_a_failed_command_needs_a_failure_word_on_its_line(self) -> None:
        fact = Fact("command", ["pytest q"], failed=True)
        assert kept(fact, "- `pytest -q` → exit 1")
        assert not kept(fact, "- `pytest -q` → ok\nErrors (open):")


class TestNextStepQuestions:
    def answers(self, raw: list[dict[str, Any]]) -> dict[str, list[str]]:
        return {q.name: fact.keys for q, fact in asked(raw)}

    def test_answers_are_read_off_the_transcript(self) -> None:
        assert self.answers(TRANSCRIPT) == {
            "task": ["fix the parser", "don t touch the public api"],
            "last ask": ["don t touch the public api"],
            "forbidden": ["don t touch the public api"],
            "last change": ["lexer py"],
            "last command": ["git status"],
            "failed command": ["pytest q 2 1 tail 3"],
            "why": ["e assertionerror assert 1 2", "1 failed 3 passed"],
            "still open": ["pytest q 2 1 tail 3"],
        }

    def test_a_command_that_passed_later_is_not_still_open(self) -> None:
        rerun = [*TRANSCRIPT, use("5", "Bash", {"command": "pytest -q 2>&1 | tail -3"})]
        answers = self.answers([*rerun, result("5", "Exit code 0\n4 passed")])
        assert "still open" not in answers
        assert answers["failed command"] == ["pytest q 2 1 tail 3"]

    def test_issue_preamble_is_not_the_task(self) -> None:
        issue = (
            "We're currently solving the following issue within our repository. "
            "Here's the issue text:\nISSUE:\nTimedelta serialization rounds down."
        )
        answers = self.answers([{"role": "user", "content": issue}])
        assert answers["task"] == ["timedelta serialization rounds down"]

    def test_a_session_without_failures_is_not_asked_about_them(self) -> None:
        names = set(self.answers(TRANSCRIPT[:5]))
        assert names == {"task", "last ask", "forbidden", "last change"}
