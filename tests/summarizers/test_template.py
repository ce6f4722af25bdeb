"""FOLDWISE_SUMMARIZER_TEMPLATE (app/summarizers/template.py): each refusal in one line, the
rendered prompt as the fake Messages API receives it, the template in the cache key."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from app.core.settings import Settings
from app.engine.types import Message
from app.summarizers.base import SummaryCache, SummaryRequest, SummaryResult
from app.summarizers.chunking import chunk_budget
from app.summarizers.factory import open_summarizer
from app.summarizers.prompts import PROMPT_VERSION, SECTIONS, SYSTEM_PROMPT, Instructions
from app.summarizers.summary_cache import cache_key
from app.summarizers.template import (
    NO_PREVIOUS_SUMMARY,
    TEMPLATE_MAX_BYTES,
    TemplateError,
    TemplateInstructions,
    _instructions,
    fold_instructions,
    parse_template,
    read_template,
)
from app.tokens.counter import TiktokenCounter
from tests.summarizers.helpers import InMemorySummaryCache, conversation, llm_settings
from tests.support.fake_anthropic import FakeAnthropic

SECRET = "sk-ant-api03-AbCdEfGhIjKlMnOpQrStUvWxYz0123456789"
GOOD = """\
House rules: write in English, past tense.

<previous_summary>
{previous_summary}
</previous_summary>

<transcript>
{transcript}
</transcript>

Focus: {focus}
Sections:
{sections}
At most {max_tokens} tokens. A literal {{brace}} stays.
"""


def transcript() -> list[Message]:
    return conversation(
        ("user", "Fix the flaky test in tests/test_sync.py."),
        ("assistant", f"Ran it: KeyError 'retries'. ANTHROPIC_API_KEY={SECRET} was set."),
    )


@pytest.fixture(autouse=True)
def fresh_loader() -> Iterator[None]:
    """Each test reads its templates anew (the loader keeps one per path and process)."""
    _instructions.cache_clear()
    yield
    _instructions.cache_clear()


def write(tmp_path: Path, content: str | bytes, name: str = "fold.txt") -> str:
    path = tmp_path / name
    if isinstance(content, bytes):
        path.write_bytes(content)
    else:
        path.write_text(content, "utf-8")
    return str(path)


def refusal(path: str) -> str:
    with pytest.raises(TemplateError) as raised:
        read_template(path)
    message = str(raised.value)
    assert len(message.splitlines()) == 1, message
    assert message.startswith(f"FOLDWISE_SUMMARIZER_TEMPLATE {path!r}: ")
    return message.removeprefix(f"FOLDWISE_SUMMARIZER_TEMPLATE {path!r}: ")


class TestRefusals:
    def test_a_missing_file(self, tmp_path: Path) -> None:
        assert refusal(str(tmp_path / "nope.txt")) == "cannot read it (No such file or directory)"

    def test_a_directory(self, tmp_path: Path) -> None:
        assert refusal(str(tmp_path)).startswith("cannot read it (")

    def test_not_utf8(self, tmp_path: Path) -> None:
        path = write(tmp_path, GOOD.encode() + b"caf\xe9")
        assert refusal(path) == f"not UTF-8 (byte {len(GOOD.encode()) + 3})"

    def test_over_the_size_limit(self, tmp_path: Path) -> None:
        padding = "x" * (TEMPLATE_MAX_BYTES - len(GOOD.encode()))
        assert read_template(write(tmp_path, GOOD + padding))  # exactly at the limit: read
        assert refusal(write(tmp_path, GOOD + padding + "x")) == "larger than 16 KiB"

    @pytest.mark.parametrize(
        ("extra", "says"),
        [
            ("{summary}", "unknown placeholder {summary}; use one of {previous_summary}, "),
            ('{"a": 1}', 'unknown placeholder {"a"}; use one of'),
            ("{focus.upper}", "unknown placeholder {focus.upper}"),
            ("{focus[0]}", "unknown placeholder {focus[0]}"),
            ("{x\ny}", "unknown placeholder {x y}"),  # still one line
            ("{" + "n" * 60 + "}", "unknown placeholder {" + "n" * 40 + "…}"),
            ("{}", "positional placeholder {}"),
            ("{0}", "positional placeholder {0}"),
            ("{focus!r}", "{focus!r} has a format: write {focus} alone"),
            ("{max_tokens:>8}", "{max_tokens:>8} has a format: write {max_tokens} alone"),
            ("{focus!s:^9}", "{focus!s:^9} has a format"),
            ("a } b", "Single '}' encountered in format string; write {{ or }} for a literal"),
            ("a { b", "expected '}' before end of string; write {{ or }}"),
        ],
    )
    def test_a_bad_placeholder(self, tmp_path: Path, extra: str, says: str) -> None:
        assert refusal(write(tmp_path, GOOD + extra)).startswith(says)

    @pytest.mark.parametrize(
        ("template", "says"),
        [
            ("{transcript}", "{previous_summary} is missing: without it each fold would drop"),
            ("{previous_summary}", "{transcript} is missing: without it the model never reads"),
            ("{previous_summary} {{transcript}}", "{transcript} is missing"),  # escaped
            ("", "{previous_summary} is missing"),
            (GOOD + "{transcript}", "{transcript} appears 2 times: each copy is paid for again"),
            (GOOD + "{previous_summary}" * 2, "{previous_summary} appears 3 times"),
        ],
    )
    def test_the_summary_and_transcript_once_each(
        self, tmp_path: Path, template: str, says: str
    ) -> None:
        assert refusal(write(tmp_path, template)).startswith(says)


class TestRender:
    def instructions(self, text: str = GOOD) -> TemplateInstructions:
        return TemplateInstructions(template=parse_template(text, "test"))

    def test_every_placeholder_filled(self) -> None:
        text = self.instructions().fresh("Task: old", "[1] user\nhi", "test names", 300)
        assert text == GOOD.format(
            previous_summary="Task: old",
            transcript="[1] user\nhi",
            focus="test names",
            sections=SECTIONS,
            max_tokens=300,
        )
        assert "A literal {brace} stays." in text

    def test_no_previous_summary_and_no_focus(self) -> None:
        text = self.instructions().fresh(None, "t", None, 50)
        assert f"<previous_summary>\n{NO_PREVIOUS_SUMMARY}\n</previous_summary>" in text
        assert "Focus: \n" in text

    def test_braces_in_the_values_are_sent_as_written(self) -> None:
        """One pass over the template: a transcript quoting a placeholder is not filled."""
        quoted = "{previous_summary} {transcript} {0} {{ } {focus!r:>9}"
        text = self.instructions("{previous_summary}|{transcript}|{focus}").fresh(
            "S {transcript}", quoted, "{sections}", 10
        )
        assert text == f"S {{transcript}}|{quoted}|{{sections}}"

    def test_a_byte_order_mark_is_dropped(self, tmp_path: Path) -> None:
        path = write(tmp_path, b"\xef\xbb\xbf{previous_summary}{transcript}")
        assert TemplateInstructions(template=read_template(path)).fresh("a", "b", None, 1) == "ab"

    def test_the_system_prompt_and_the_prefix_instruction_stay_built_in(self) -> None:
        ours, builtin = self.instructions(), Instructions()
        assert ours.system == SYSTEM_PROMPT
        assert ours.on_prefix(2, "end", "f", 100) == builtin.on_prefix(2, "end", "f", 100)

    def test_the_template_takes_room_from_the_chunks(self, counter: TiktokenCounter) -> None:
        tokens = self.instructions().instruction_tokens(counter)
        assert tokens > 0 and Instructions().instruction_tokens(counter) == 0
        assert chunk_budget(60_000, 300, tokens) == chunk_budget(60_000, 300) - tokens


class TestLoader:
    def test_no_template_is_the_built_in_prompt(self) -> None:
        for path in (None, "", "  "):
            instructions = fold_instructions(Settings(_env_file=None, summarizer_template=path))
            assert type(instructions) is Instructions
            assert instructions.version == PROMPT_VERSION

    def test_read_once_per_process(self, tmp_path: Path) -> None:
        """Checked at start, kept: an edit takes effect at the next start, and a broken edit
        cannot fail the folds of a running server."""
        path = write(tmp_path, GOOD)
        settings = Settings(_env_file=None, summarizer_template=path)
        first = fold_instructions(settings)
        write(tmp_path, "{broken")
        assert fold_instructions(settings) is first
        _instructions.cache_clear()  # a restart
        with pytest.raises(TemplateError, match="expected '}'"):
            fold_instructions(settings)


async def fold_once(
    fake: FakeAnthropic,
    counter: TiktokenCounter,
    request: SummaryRequest,
    template: str,
    cache: SummaryCache | None = None,
) -> SummaryResult:
    """One `llm` fold through the production factory (its own client, closed after)."""
    settings = llm_settings(fake.base_url, summarizer_template=template)
    async with open_summarizer("llm", settings=settings, counter=counter, cache=cache) as llm:
        return await llm.summarize(request)


class TestThroughTheSdk:
    async def test_the_template_is_the_prompt_sent(
        self, tmp_path: Path, fake_anthropic: FakeAnthropic, counter: TiktokenCounter
    ) -> None:
        path = write(tmp_path, GOOD)
        request = SummaryRequest(transcript(), "Task: earlier {transcript}", 300, focus="tests")
        result = await fold_once(fake_anthropic, counter, request, path)
        assert result.method == "llm"
        (sent,) = fake_anthropic.requests
        assert sent.body["system"] == SYSTEM_PROMPT
        assert sent.prompt.startswith(
            "House rules: write in English, past tense.\n\n<previous_summary>\n"
            "Task: earlier {transcript}\n</previous_summary>\n\n<transcript>\n[1] user\n"
        )
        assert sent.prompt.endswith(
            f"Focus: tests\nSections:\n{SECTIONS}\nAt most 300 tokens. A literal {{brace}} stays.\n"
        )
        assert SECRET not in sent.prompt and "[REDACTED:anthropic_key]" in sent.prompt

    async def test_a_transcript_quoting_a_placeholder_is_sent_as_written(
        self, tmp_path: Path, fake_anthropic: FakeAnthropic, counter: TiktokenCounter
    ) -> None:
        path = write(tmp_path, GOOD)
        said = "Put {previous_summary} and {{x}} in the f-string, then {0}."
        request = SummaryRequest(conversation(("user", said)), None, 300)
        await fold_once(fake_anthropic, counter, request, path)
        (sent,) = fake_anthropic.requests
        assert f"<transcript>\n[1] user\n{said}\n</transcript>" in sent.prompt
        assert f"<previous_summary>\n{NO_PREVIOUS_SUMMARY}\n</previous_summary>" in sent.prompt


class TestCacheKey:
    def test_the_key_changes_with_the_template_and_not_without_one(self) -> None:
        request = SummaryRequest(transcript(), None, 300)
        one = TemplateInstructions(template=parse_template(GOOD, "a"))
        other = TemplateInstructions(template=parse_template(GOOD + "More.", "b"))
        assert cache_key("llm", "m", request, prompt=Instructions().version) == cache_key(
            "llm", "m", request
        )
        keys = {
            cache_key("llm", "m", request, prompt=i.version) for i in (Instructions(), one, other)
        }
        assert len(keys) == 3

    async def test_an_edited_template_is_not_served_the_old_summaries(
        self, tmp_path: Path, fake_anthropic: FakeAnthropic, counter: TiktokenCounter
    ) -> None:
        path = write(tmp_path, GOOD)
        cache = InMemorySummaryCache()
        request = SummaryRequest(transcript(), None, 300)
        assert not (await fold_once(fake_anthropic, counter, request, path, cache)).cached
        assert (await fold_once(fake_anthropic, counter, request, path, cache)).cached
        write(tmp_path, GOOD + "Also list the tests run.\n")
        _instructions.cache_clear()  # a restart with the edited file
        assert not (await fold_once(fake_anthropic, counter, request, path, cache)).cached
        assert len(fake_anthropic.requests) == 2
        assert fake_anthropic.requests[1].prompt.endswith("Also list the tests run.\n")
