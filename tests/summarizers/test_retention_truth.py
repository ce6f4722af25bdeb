"""The real-transcript benchmark's ground truth and matching rule (bench/real_facts.py)."""

from __future__ import annotations

from typing import Any

from bench.real_facts import Fact, ground_truth, informative_lines, kept, key


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
