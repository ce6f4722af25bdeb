"""Every path that reads text does work linear (up to a log factor) in it, whatever its shape.

Each path gets each hostile shape at N and at 4N characters. Two measures, both must grow at
most ~4× (a quadratic step is 16×):

- calls: every Python and C function call while the path runs (`sys.setprofile`), which is
  deterministic and catches re-counting or re-scanning per line or per item;
- CPU time of this thread (best of a few runs): the work *inside* one C call — a regex
  backtracking over a run of blanks, a slice copied in a loop, tiktoken on one long
  pre-token — makes no calls a profiler could count. It is the only measure that sees it, so
  its bound is loose (8× for 4× the input) and tiny timings are not compared.

Redaction (app/summarizers/redact/) has its own owner and tests; the previous summary
reaches it without its blank lines (a run of them was quadratic there), and is read here
both through `rule_summary` (redaction included) and from after it (`parse_summary`).
"""

from __future__ import annotations

import base64
import random
import time
from collections.abc import Callable
from typing import Any

import pytest

from app.engine.prune import excerpted
from app.engine.text import block_text
from app.engine.truncate import truncate_message, truncate_text
from app.schemas.input_types import check_json
from app.summarizers.rule import rule_summary
from app.summarizers.rule.extract import command_key, sentences
from app.summarizers.rule.harness import split_user_text, stated_cwd
from app.summarizers.rule.outcomes import error_lines, exit_code, first_error_line
from app.summarizers.rule.parse import parse_summary
from app.summarizers.rule.shell import shell_files
from app.tokens.counter import TiktokenCounter, counter_for_encoding
from app.tokens.encodings import get_encoding
from tests.engine.strategies import FakeCounter, make_message
from tests.support.work import count_calls

N = 8_000
GROWTH = 4
MAX_CALLS_GROWTH = 6.0  # 4× the input: linear 4×, n log n ~5×, quadratic 16×
MAX_TIME_GROWTH = 8.0
MIN_TIMED_S = 0.002  # below this at 4N, timings are noise (and nothing is slow)
COUNTER = FakeCounter()
TIKTOKEN = counter_for_encoding("o200k_base")


def _lines(n: int, line: Callable[[int], str]) -> str:
    out, size, i = [], 0, 0
    while size < n:
        out.append(line(i))
        size += len(out[-1])
        i += 1
    return "".join(out)


SHAPES: dict[str, Callable[[int], str]] = {
    "newlines": lambda n: "Fix the parser.\n" + "\n" * n + "Then run the tests.",
    "spaces": lambda n: "Fix the parser. " + " " * n + "Then run the tests.",
    "tabs": lambda n: "Fix\t" + "\t" * n + "x",
    "blank lines": lambda n: "Fix it" + " \n" * (n // 2) + "x",
    "one unbroken token": lambda n: "e" * n,
    "many tiny lines": lambda n: "a\n" * (n // 2),
    "deeply indented code": lambda n: _lines(n, lambda i: " " * (i % 400) + "x = f(y)\n"),
    "near-duplicate lines": lambda n: _lines(
        n, lambda i: f"FAILED tests/test_{i}.py::test_x - Error: 1 failed, exit code 1\n"
    ),
    "unclosed tags": lambda n: "<system-reminder><command-args><cwd>" * (n // 36),
    "pipes and tallies": lambda n: "| 1 failed " * (n // 11),
    "failure locations": lambda n: _lines(
        n, lambda i: f"  {i}) test case (M)\n  └─ lib/a{i}.ex:{i}: x\nE   assert {i} == 0\n"
    ),
    "one dotted token": lambda n: "a." * (n // 2) + "py:1:",
    "standing instructions": lambda n: (
        "We're currently solving the following issue.\n"
        + "\nINSTRUCTIONS:\nNever run -c. " * (n // 30)
    ),
    "error code bodies": lambda n: "{" + "Error code: 400 " * (n // 16) + "}",
    "runner tallies": lambda n: _lines(n, lambda i: f"Test Files  {i} failed | {i} passed\n"),
    "connection strings, encoded queries": lambda n: ";Pwd=a%3Dapi_key%3D" * (n // 19),
    "64-column base64 lines": lambda n: _lines(n, lambda i: f"{i:04d}" + "Qz7xK2mP9vL4" * 5 + "\n"),
}


def _turn(role: str, content: Any) -> Any:
    return make_message(1, role, content, COUNTER)


def _bash(command: str, output: str) -> list[Any]:
    call = {"type": "tool_use", "id": "t1", "name": "bash", "input": {"command": command}}
    result = {"type": "tool_result", "tool_use_id": "t1", "content": output, "is_error": True}
    return [
        make_message(1, "user", "Fix the failing tests please", COUNTER),
        make_message(2, "assistant", [call], COUNTER),
        make_message(3, "user", [result], COUNTER),
    ]


def _counted(text: str) -> int:
    TIKTOKEN.clear_cache()
    return TIKTOKEN.count_text(text)


PATHS: dict[str, Callable[[str], object]] = {
    "harness stripping": split_user_text,
    "working directory": stated_cwd,
    "sentences": sentences,
    "error lines": error_lines,
    "first error line": first_error_line,
    "exit status": exit_code,
    "shell lexer": shell_files,
    "command key": command_key,
    "previous summary": parse_summary,
    "rule: user turn": lambda t: rule_summary([_turn("user", t)], None, 300, COUNTER),
    "rule: assistant turn": lambda t: rule_summary([_turn("assistant", t)], None, 300, COUNTER),
    "rule: tool output": lambda t: rule_summary(_bash("pytest", t), None, 300, COUNTER),
    "rule: shell command": lambda t: rule_summary(_bash("cat " + t, "ok"), None, 300, COUNTER),
    "rule: previous summary": lambda t: rule_summary(
        [_turn("user", "Please fix the parser")], t, 300, COUNTER
    ),
    "rule: one turn per line": lambda t: rule_summary(
        [_turn("user", line) for line in t.splitlines()[:2000] if line.strip()], None, 300, COUNTER
    ),
    "truncation": lambda t: truncate_text(t, 50, COUNTER),
    "message truncation": lambda t: truncate_message(_turn("user", t), 50, COUNTER),
    "prune excerpt": lambda t: excerpted(_turn("user", [{"type": "text", "text": t}]), COUNTER),
    "counting": _counted,
    "input_types": lambda t: check_json({"role": "user", "content": [{"type": "text", "text": t}]}),
}


def _cpu_seconds(run: Callable[[], object], repeats: int = 3) -> float:
    best = float("inf")
    for _ in range(repeats):
        started = time.thread_time()
        run()
        best = min(best, time.thread_time() - started)
    return best


@pytest.mark.parametrize("shape", list(SHAPES))
@pytest.mark.parametrize("path", list(PATHS))
def test_four_times_the_text_is_at_most_about_four_times_the_work(path: str, shape: str) -> None:
    read = PATHS[path]
    small, large = SHAPES[shape](N), SHAPES[shape](GROWTH * N)
    calls = (count_calls(lambda: read(small)), count_calls(lambda: read(large)))
    assert calls[1] <= MAX_CALLS_GROWTH * max(calls[0], 1), f"calls {calls[0]} → {calls[1]}"
    seconds = (_cpu_seconds(lambda: read(small)), _cpu_seconds(lambda: read(large)))
    if seconds[1] >= MIN_TIMED_S:
        growth = seconds[1] / max(seconds[0], 1e-6)
        assert growth <= MAX_TIME_GROWTH, f"CPU {seconds[0]:.4f} s → {seconds[1]:.4f} s"


class ReadingCounter:
    """FakeCounter's counts, plus how many characters it was handed to count."""

    def __init__(self) -> None:
        self.read = 0

    def count_text(self, text: str) -> int:
        self.read += len(text)
        return len(text) // 4 + 1 if text else 0

    def count_content(self, content: Any) -> int:
        if isinstance(content, str):
            return self.count_text(content)
        return sum(3 + self.count_text(block_text(b)) for b in content)

    def count_message(self, message: Any) -> int:
        return 4 + self.count_content(message.content)


# What a cut may count beyond the text itself: candidates near the allowance, never halves of
# the text (bisection from the middle counted ~20 of them: 10× the text).
ALLOWANCE = 500
MAX_EXTRA_READ = 100_000


@pytest.mark.parametrize("size", [1_000_000, 4_000_000])
@pytest.mark.parametrize("shape", list(SHAPES))
def test_a_cut_counts_the_text_about_once(shape: str, size: int) -> None:
    text = SHAPES[shape](size)
    counter = ReadingCounter()
    cut = truncate_text(text, ALLOWANCE, counter)  # type: ignore[arg-type]
    assert cut is not None and counter.count_text(cut) <= ALLOWANCE
    assert counter.read - len(text) <= MAX_EXTRA_READ + len(cut)

    counter = ReadingCounter()
    message = make_message(1, "user", [{"type": "text", "text": text}], counter)
    counter.read = 0
    kept = truncate_message(message, ALLOWANCE, counter)  # type: ignore[arg-type]
    assert kept is not None and kept.tokens <= ALLOWANCE
    # A few whole reads (the message, its block, the text), never one per candidate.
    assert counter.read <= 5 * len(text) + MAX_EXTRA_READ


@pytest.mark.parametrize("shape", ["newlines", "spaces", "one unbroken token", "unclosed tags"])
def test_counting_a_long_run_is_linear(shape: str) -> None:
    """tiktoken alone: 2.4× per doubling on one long pre-token, and a panic past ~1M spaces."""
    small, large = SHAPES[shape](250_000), SHAPES[shape](1_000_000)
    seconds = (_cpu_seconds(lambda: _counted(small), 2), _cpu_seconds(lambda: _counted(large), 2))
    assert seconds[1] <= MAX_TIME_GROWTH * seconds[0], f"{seconds[0]:.3f} s → {seconds[1]:.3f} s"
    assert _counted(" " * 2_000_000) > 0  # tiktoken alone overflows its stack here


def test_a_long_shell_word_is_lexed_in_linear_time() -> None:
    """shlex builds a token one character at a time: quadratic in the longest word."""
    small, large = "cat " + "e" * 100_000, "cat " + "e" * 400_000
    seconds = (_cpu_seconds(lambda: shell_files(small)), _cpu_seconds(lambda: shell_files(large)))
    assert seconds[1] <= MAX_TIME_GROWTH * max(seconds[0], 1e-4), f"{seconds}"


# A cut with the real tokenizer to a third of the text: each candidate head shares all but its
# last pieces with the text encoded before it (app/tokens/counter.py `_Pieces`), so the text is
# encoded about once, plus a few pieces per candidate; before, each of ~27 candidates was
# encoded whole, twice (~18 times the text).
MAX_ENCODED = 3
TOKENIZER_SHAPES = {
    "one unbroken token": SHAPES["one unbroken token"],
    "random base64": lambda n: base64.b64encode(random.Random(5).randbytes(n)).decode()[:n],
}


def _encoded_by_a_cut(text: str) -> int:
    counter = TiktokenCounter(get_encoding("o200k_base"))
    encode, encoded = counter._encode, [0]

    def spy(text: str) -> list[int]:
        encoded[0] += len(text)
        return encode(text)

    result = {"type": "tool_result", "tool_use_id": "t1", "content": text}
    message = make_message(3, "user", [result], counter)
    counter.clear_cache()
    counter._encode = spy
    allowance = message.tokens // 3
    cut = truncate_message(message, allowance, counter)
    assert cut is not None and allowance - 100 <= cut.tokens <= allowance
    return encoded[0]


@pytest.mark.parametrize("shape", list(TOKENIZER_SHAPES))
def test_a_cut_with_the_tokenizer_encodes_the_text_about_once(shape: str) -> None:
    small, large = (TOKENIZER_SHAPES[shape](n) for n in (500_000, 1_000_000))
    encoded = _encoded_by_a_cut(small), _encoded_by_a_cut(large)
    for text, chars in zip((small, large), encoded, strict=True):
        assert chars <= MAX_ENCODED * len(text), f"{chars:,} characters encoded for {len(text):,}"
    assert encoded[1] <= 2.5 * encoded[0], f"encoded {encoded[0]:,} → {encoded[1]:,}"
