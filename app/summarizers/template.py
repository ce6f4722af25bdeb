"""`FOLDWISE_SUMMARIZER_TEMPLATE`: the fresh fold's user turn from a file, checked at start.

The file replaces `Instructions.fresh` (the user turn that carries the previous summary and
the transcript); the system prompt and the instruction after a cached prefix stay built in,
since the latter has no transcript to place. Every check runs when the file is read, so a
template that would fail, or silently lose facts, refuses to start instead of at a fold:

- read as UTF-8 (a leading BOM is dropped), at most `TEMPLATE_MAX_BYTES`;
- placeholders are `str.format` fields, only the names of `PLACEHOLDERS`, with no format
  spec or conversion (`{{` and `}}` are literal braces);
- `{previous_summary}` and `{transcript}` exactly once: without the previous summary each
  fold would lose every earlier fact; twice would pay for the same text twice, past the
  room the chunk planner left.

The template is parsed once; rendering joins its literal pieces with the values in one pass,
so a transcript holding `{previous_summary}` is sent as written, never substituted again.
"""

from __future__ import annotations

import functools
import hashlib
import string
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from app.core.logging import get_logger
from app.core.settings import Settings
from app.summarizers.prompts import PROMPT_VERSION, SECTIONS, Instructions
from app.tokens.base import TokenCounter

log = get_logger("foldwise.summarizers")

ENV = "FOLDWISE_SUMMARIZER_TEMPLATE"
# An instruction, not a place for data: the built-in one is ≈ 2 KiB. 16 KiB (≈ 4,000 tokens)
# leaves room for examples and house rules, yet is sent with every chunk of every fold, so a
# larger file is far more likely a wrong path (a log, a transcript) than an instruction.
TEMPLATE_MAX_BYTES = 16 * 1024
PLACEHOLDERS = ("previous_summary", "transcript", "focus", "max_tokens", "sections")
# Each exactly once (see the module docstring), and why a template without it is refused.
REQUIRED = {
    "previous_summary": "without it each fold would drop every fact of the earlier ones",
    "transcript": "without it the model never reads the messages it folds",
}
NO_PREVIOUS_SUMMARY = "There is no previous summary yet."
_ALLOWED = ", ".join(f"{{{name}}}" for name in PLACEHOLDERS)
_LITERAL_BRACES = "write {{ or }} for a literal brace"
# A placeholder's name is quoted in the message up to this many characters (it may be a JSON
# object someone forgot to escape).
SHOWN_NAME_CHARS = 40


class TemplateError(ValueError):
    """A template Foldwise refuses; the message is the one line `foldwise` prints."""


@dataclass(frozen=True, slots=True)
class FoldTemplate:
    """A checked template: literal text, each piece followed by a placeholder or None."""

    pieces: tuple[tuple[str, str | None], ...]
    digest: str  # sha256 of the text: the template's identity in the summary cache key

    @property
    def literal(self) -> str:
        return "".join(text for text, _ in self.pieces)

    def render(self, values: Mapping[str, str]) -> str:
        """One pass over the pieces: the values are copied, never read for braces."""
        return "".join(_chunks(self.pieces, values))


def _chunks(pieces: tuple[tuple[str, str | None], ...], values: Mapping[str, str]) -> Iterator[str]:
    for text, name in pieces:
        yield text
        if name is not None:
            yield values[name]


@dataclass(frozen=True, slots=True)
class TemplateInstructions(Instructions):
    """The built-in instructions with the fresh prompt's user turn from a template."""

    template: FoldTemplate = field(kw_only=True)

    @property
    def version(self) -> str:
        return f"{PROMPT_VERSION}+template:{self.template.digest}"

    def fresh(
        self, previous_summary: str | None, transcript: str, focus: str | None, max_tokens: int
    ) -> str:
        return self.template.render(
            {
                "previous_summary": previous_summary or NO_PREVIOUS_SUMMARY,
                "transcript": transcript,
                "focus": focus or "",
                "max_tokens": str(max_tokens),
                "sections": SECTIONS,
            }
        )

    def instruction_tokens(self, counter: TokenCounter) -> int:
        """The template's own text, counted whole (the overhead left for the built-in one
        stays too: the system prompt is still sent)."""
        return counter.count_text(self.template.literal)


def parse_template(text: str, source: str) -> FoldTemplate:
    """The checked template of `text`; TemplateError names `source` and the first problem."""
    try:
        fields = list(string.Formatter().parse(text))
    except ValueError as exc:  # a lone `{` or `}`
        raise _refuse(source, f"{exc}; {_LITERAL_BRACES}") from None
    pieces = []
    for literal, name, spec, conversion in fields:
        if name is not None:
            _check_field(source, name, spec, conversion)
        pieces.append((literal, name))
    used = [name for _, name in pieces]
    for name, why in REQUIRED.items():
        if name not in used:
            raise _refuse(source, f"{{{name}}} is missing: {why}")
        if used.count(name) > 1:
            raise _refuse(
                source, f"{{{name}}} appears {used.count(name)} times: each copy is paid for again"
            )
    digest = hashlib.sha256(text.encode()).hexdigest()
    return FoldTemplate(tuple(pieces), digest)


def _check_field(source: str, name: str, spec: str | None, conversion: str | None) -> None:
    if name == "" or name.isdigit():
        raise _refuse(source, f"positional placeholder {{{name}}}; use one of {_ALLOWED}")
    if name not in PLACEHOLDERS:
        shown = name[:SHOWN_NAME_CHARS] + ("…" if len(name) > SHOWN_NAME_CHARS else "")
        raise _refuse(
            source, f"unknown placeholder {{{shown}}}; use one of {_ALLOWED}; {_LITERAL_BRACES}"
        )
    if spec or conversion:
        shown = (f"!{conversion}" if conversion else "") + (f":{spec}" if spec else "")
        raise _refuse(source, f"{{{name}{shown}}} has a format: write {{{name}}} alone")


def read_template(path: str) -> FoldTemplate:
    """The checked template in the file at `path`, read at most `TEMPLATE_MAX_BYTES` + 1."""
    try:
        with Path(path).open("rb") as file:
            data = file.read(TEMPLATE_MAX_BYTES + 1)
    except OSError as exc:
        raise _refuse(path, f"cannot read it ({exc.strerror or type(exc).__name__})") from None
    if len(data) > TEMPLATE_MAX_BYTES:
        raise _refuse(path, f"larger than {TEMPLATE_MAX_BYTES // 1024} KiB")
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise _refuse(path, f"not UTF-8 (byte {exc.start})") from None
    return parse_template(text, path)


def _refuse(source: str, why: str) -> TemplateError:
    """The error, on one line whatever the template's text quoted in `why` holds."""
    return TemplateError(f"{ENV} {source!r}: {' '.join(why.split())}")


def fold_instructions(settings: Settings) -> Instructions:
    """What the LLM summarizer is told: the built-in instructions, or those of the template."""
    return _instructions((settings.summarizer_template or "").strip() or None)


@functools.cache
def _instructions(path: str | None) -> Instructions:
    """Read once per path and process: the file checked at start is the one every fold uses
    (an edit takes effect at the next start, and cannot break folds of a running server)."""
    if path is None:
        return Instructions()
    template = read_template(path)
    log.info("fold instruction from %s (sha256 %s)", path, template.digest[:12])
    return TemplateInstructions(template=template)
