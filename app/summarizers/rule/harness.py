"""Text the agent harness injects into user turns, told apart from what the user wrote.

Coding agents put their own text in the `user` role: Claude Code (system reminders, slash-command
wrappers, local-command output, hook feedback, interruption markers, background-task
notifications, skill bodies, and the summary of a continued session), Codex CLI (AGENTS.md
instructions, environment context), Gemini CLI (its context set-up message), SWE-agent (the
in-context demonstration, the instructions after the issue text), OpenHands (runtime and
repository info, its standing instructions) and Aider (console lines, confirmation prompts).
None of it is the task, a request, a constraint or the focus; `split_user_text` removes it and
returns what is left, plus a continued session's carried-over summary and the working
directory when the boilerplate names one.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from app.summarizers.rule.scan import between, cut_tail, drop_blocks

# Whole tagged blocks, dropped with their content (the content is the harness talking).
_TAGGED = (
    "system-reminder", "local-command-caveat", "local-command-stdout", "local-command-stderr",
    "command-name", "command-message", "command-args", "command-contents", "task-notification",
    "bash-input", "bash-stdout", "bash-stderr", "user-prompt-submit-hook", "environment_context",
    "INSTRUCTIONS", "user_instructions", "RUNTIME_INFORMATION", "REPOSITORY_INFO",
    "REPOSITORY_INSTRUCTIONS", "EXTRA_INFO", "turn_aborted", "session_context",
)  # fmt: skip
# Closed blocks only: a person writing "<environment_context>" in a question keeps the rest.
# Removed by a linear scan (scan.py): `<tag>.*?</tag>` is quadratic in unclosed openings.
_TAG_OPEN = re.compile(r"<(" + "|".join(_TAGGED) + r")\b[^<>]*>", re.IGNORECASE)
_TAG_CLOSE = {tag.lower(): re.compile(f"</{tag}>", re.IGNORECASE) for tag in _TAGGED}
_COMMAND_NAME = re.compile(r"<command-name>\s*(/[^<\s]+)\s*</command-name>")
# A line that is only an opening or closing tag (`<steps CRITICAL="TRUE">`) is markup.
_TAG_LINE = re.compile(r"^[ \t]*</?[A-Za-z][\w:-]*(?:\s[^<>\n]*)?>[ \t]*$", re.MULTILINE)
# Messages that are boilerplate from their first words to their end.
_WHOLE_MESSAGE = re.compile(
    r"""^\s*(?:
        Caveat:\ The\ messages\ below\ were\ generated\ by\ the\ user\ while\ running\ local
      | \[Request\ interrupted\ by\ user
      | Stop\ hook\ feedback:
      | \S*\ ?hook\ (?:feedback|blocking\ error|success)
      | Base\ directory\ for\ this\ skill:
      | Read\ the\ output\ file\ to\ retrieve\ the\ result:
      | \#\ AGENTS\.md\ instructions\ for
      | This\ is\ the\ Gemini\ CLI\.\ We\ are\ setting\ up\ the\ context
      | Here\ is\ a\ demonstration\ of\ how\ to\ correctly\ accomplish\ this\ task
      | Tool\ (?:use|call)\ was\ (?:rejected|cancelled)
      | No\ response\ requested\.
    )""",
    re.VERBOSE | re.IGNORECASE,
)
# Claude Code's continued session: this preamble, the earlier summary, then a closing line.
_CONTINUED = re.compile(
    r"^\s*This session is being continued from a previous conversation[^\n]*\n", re.IGNORECASE
)
# Tails are cut at the line break before their phrase (scan.cut_tail: `\n\s*PHRASE` would
# rescan a run of blank lines from each of its newlines).
_CONTINUED_TAIL = re.compile(
    r"Please continue the conversation from where we left off", re.IGNORECASE
)
# SWE-agent and OpenHands append standing instructions to the issue text.
_INSTRUCTIONS_TAIL = re.compile(
    r"IMPORTANT: You should ONLY interact with the environment|"
    r"When you think you have (?:fixed the issue|solved the task)"
)
# SWE-agent's `INSTRUCTIONS:` tail, cut only after its own preamble: a person may well write
# an "INSTRUCTIONS:" heading of their own.
_SWE_AGENT_TAIL = re.compile(r"INSTRUCTIONS:")
_SWE_AGENT = re.compile(r"^\s*We're currently solving the following ")
# SWE-agent's issue preamble; a CTF preamble is kept (it names the challenge).
_ISSUE_PREAMBLE = re.compile(
    r"^\s*We're currently solving the following issue within our repository\. "
    r"Here's the issue text:\s*\n(?:ISSUE:\s*\n)?"
)
# Aider's console: `> ` lines around a turn (token costs, edits applied, commits, prompts).
_AIDER_MARK = re.compile(r"^> (?:Tokens: |Aider v\d|Applied edit to |Commit [0-9a-f]{7} )", re.M)
_AIDER_PROMPT = re.compile(r"^.*\(Y\)es/\(N\)o.*$", re.MULTILINE)
_QUOTED_LINE = re.compile(r"^>(?: .*)?$", re.MULTILINE)
_AIDER_HEADER = re.compile(r"^# aider chat started at .*$", re.MULTILINE)
# Where a harness says the session runs: Codex `<cwd>`, Claude Code's `Working directory:`,
# Gemini CLI's set-up message, SWE-agent's prompt line `(Current directory: …)`.
_CWD = re.compile(
    r"<cwd>(?P<tag>[^<]*)</cwd>"
    r"|^(?:Working directory:|I'm currently working in the directory:)\s*(?P<line>/\S+)"
    r"|^\(Current directory: (?P<prompt>/[^)\s]*)\)",
    re.MULTILINE,
)


@dataclass(frozen=True, slots=True)
class UserText:
    """A user turn split into what the person wrote and what the harness carried."""

    text: str
    carried_summary: str | None = None
    cwd: str | None = None
    command: str | None = None  # a slash command the user ran (`/review src/`), if any
    instructions: str = ""  # the harness's standing instructions (SWE-agent, OpenHands)


def split_user_text(text: str) -> UserText:
    """Remove harness boilerplate from one user text; keep a continued session's summary apart."""
    cwd = stated_cwd(text)
    name = _COMMAND_NAME.search(text)
    args = between(text, "<command-args>", "</command-args>")
    command = f"{name.group(1)} {args.strip() if args else ''}".strip() if name else None
    if _CONTINUED.match(text):
        body = cut_tail(_CONTINUED.sub("", text, count=1), _CONTINUED_TAIL).strip()
        return UserText("", body or None, cwd, command)
    if _WHOLE_MESSAGE.match(text):
        return UserText("", None, cwd, command)
    cleaned = drop_blocks(text, _TAG_OPEN, _TAG_CLOSE)
    if _AIDER_MARK.search(cleaned):
        cleaned = _QUOTED_LINE.sub("", cleaned)
    cleaned = _AIDER_HEADER.sub("", _AIDER_PROMPT.sub("", cleaned))
    if _SWE_AGENT.match(cleaned):
        cleaned = _ISSUE_PREAMBLE.sub("", cleaned, count=1)
        cleaned, swe_agent = _split_tail(cleaned, _SWE_AGENT_TAIL)
    else:
        swe_agent = ""
    cleaned, tail = _split_tail(cleaned, _INSTRUCTIONS_TAIL)
    cleaned = _TAG_LINE.sub("", cleaned)
    if _WHOLE_MESSAGE.match(cleaned):
        return UserText("", None, cwd, command)
    return UserText(cleaned.strip(), None, cwd, command, swe_agent + tail)


def _split_tail(text: str, phrase: re.Pattern[str]) -> tuple[str, str]:
    """`text` cut before `phrase` (scan.cut_tail), and what was cut."""
    head = cut_tail(text, phrase)
    return head, text[len(head) :]


def stated_cwd(text: str) -> str | None:
    """The working directory a harness states in `text`, if any (the last one said)."""
    found = [_cwd(m) for m in _CWD.finditer(text)]
    said = [cwd for cwd in found if cwd]
    return said[-1] if said else None


def _cwd(match: re.Match[str]) -> str | None:
    tag = match.group("tag")
    if tag is None:
        return match.group("line") or match.group("prompt")
    tag = tag.strip()  # stripped here: `\s*` around a lazy group rescans long blank runs
    return tag if tag and "\n" not in tag else None


def aider_edits(text: str) -> list[str]:
    """Files Aider's console says it edited (`> Applied edit to PATH`)."""
    return re.findall(r"^> Applied edit to (\S+)\s*$", text, re.MULTILINE)
