"""Ground truth for the real-transcript benchmark: facts read mechanically from the raw messages.

Written for the benchmark alone and independent of the summarizer's parsers (nothing is
imported from app/summarizers), so the benchmark does not measure the extractor against itself.
Never hand-labelled. Five categories, and one reported apart:

- `modified_file`: the path argument of a successful edit/write/create/insert call
  (Claude Code Edit/Write/MultiEdit, SWE-agent create/insert/edit with a path, str_replace_editor
  except `view`), the `*** Add/Update File:` lines of an apply_patch call, and OpenHands'
  file helpers called from `run_ipython` code;
- `read_file`: the path argument of a successful read/open/view call, for files never modified;
- `command`: each distinct shell command (first line), with its status: failed when the result
  is flagged `is_error` or reports a non-zero exit code;
- `error`: one fact per distinct failing result (flagged, non-zero exit, or an error line in a
  shell result that carries no status); its informative lines are the exception or assertion
  lines, `FAILED` test ids, the failure tally and error-prefixed lines (else the first line that
  is not a bare exit status); the fact is kept when any one of them is in the summary;
- `error_line` (reported apart, not pooled): each distinct informative line of a failing
  result, kept only when that line itself is in the summary;
- `constraint`: a sentence the user wrote (harness text removed, see `_HARNESS`; a line of
  markup tags alone is not a sentence) with a directive word (must, never, don't, only, make
  sure, important, …).

Matching, the same for every method: text is lowercased and every run of non-word characters
becomes one space (`normalize`); a fact is kept when one of its keys, normalized and cut to
KEY_CHARS, appears in the normalized summary on word boundaries. A path's key is its file name;
a failed command also needs a failure word on the same summary line.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

CATEGORIES = ("modified_file", "read_file", "command", "error", "constraint")
# Reported beside the categories, not pooled with them: each distinct informative line of a
# failing result (an `error` fact is kept by any one of them; a line fact only by itself).
LINE_CATEGORIES = ("error_line",)
# Long enough to identify a command, error line or sentence; short enough that a summary
# quoting it with its own framing (backticks, "→ exit 1") still matches.
KEY_CHARS = 50

_WRITE_TOOLS = {"edit", "write", "multiedit", "notebookedit", "create", "insert", "write_file"}
_WRITE_TOOLS |= {"edit_file", "create_file", "replace_in_file"}
_READ_TOOLS = {"read", "open", "view", "read_file", "open_file", "view_file", "cat"}
_PATH_ARGS = ("file_path", "path", "filename", "filepath", "notebook_path")
_PATCH = re.compile(r"^\*\*\* (?:Add|Update) File: (.+)$", re.MULTILINE)
_IPYTHON_WRITE = re.compile(
    r"\b(?:create_file|edit_file_by_replace|append_file|insert_content_at_line|edit_file)"
    r"\(\s*(?:file_name\s*=\s*)?['\"]([^'\"]+)['\"]"
)
_IPYTHON_READ = re.compile(r"\bopen_file\(\s*(?:path\s*=\s*)?['\"]([^'\"]+)['\"]")
_EXIT = re.compile(r"(?i)(?:exit code|exited with code|exit status)[:\s]+(-?\d+)")
_INFORMATIVE = re.compile(
    r"""^(?:
        (?:[\w.]+\.)?\w*(?:Error|Exception)\b.*          # ValueError: …, SyntaxError …
      | E\s+(?:\w*Error|assert)\b.*                      # pytest assertion
      | (?:FAILED|ERROR)\s+\S+::\S+.*                    # pytest failed test id
      | (?:error|fatal|Error|ERROR|FATAL)(?:\[\w+\])?:.* # error: …, fatal: …
      | \*\*\ \(\w+\).*                                  # Elixir ** (RuntimeError)
      | .*\berror\ TS\d+.*                               # tsc
      | .*(?:No\ such\ file\ or\ directory|command\ not\ found|does\ not\ exist|
             No\ exact\ match\ found|Permission\ denied).*
    )$""",
    re.VERBOSE,
)
_TALLY = re.compile(r"(?i)\b[1-9]\d* (?:failed|failures?)\b")
# Status framing of Claude Code (`Exit code 1`) and Codex CLI (`Chunk ID: …`, `Wall time: …`,
# `Process exited with code 1`, …) says nothing about what went wrong.
_FRAMING = re.compile(
    r"(?i)^(?:exit code:? -?\d+|(?:chunk id|wall time|original token count):.*|output:|"
    r"process exited with code -?\d+)$"
)
_FAILURE_WORDS = re.compile(r"(?i)\b(?:exit [1-9]\d*|exit code [1-9]\d*|fail\w*|error\w*)")
_DIRECTIVE = re.compile(
    r"(?i)\b(?:must|mustn't|never|don't|do not|only|make sure|ensure|important|critical|"
    r"avoid|should not|shouldn't|not allowed|without|need to|has to|have to)\b"
)
# Text the agent harness puts in user turns (written for the benchmark, not shared with the
# summarizer): whole blocks that start like this are not the user's words.
_HARNESS = re.compile(
    r"^\s*(?:<[\w-]+>|Caveat: The messages below|This session is being continued|"
    r"\[Request interrupted|Here is a demonstration|# AGENTS\.md|Base directory for this skill|"
    r"Read the output file to retrieve|Stop hook feedback|This is the Gemini CLI)"
)
_HARNESS_TAIL = re.compile(
    r"\n\s*(?:INSTRUCTIONS:|IMPORTANT: You should ONLY interact).*\Z", re.DOTALL
)
_FENCE = re.compile(r"```.*?(?:```|\Z)", re.DOTALL)
# A line that is only markup tags (`<steps CRITICAL="TRUE">`, `</step>`) is a template's
# structure, not something the user said.
_TAGS_ONLY = re.compile(r"^\s*(?:</?[\w:-]+(?:\s[^<>]*)?/?>\s*)+$")
_SPLIT = re.compile(r"(?<=[.!?])\s+|\n+")


@dataclass
class Fact:
    category: str
    keys: list[str]  # normalized; any one of them in the summary keeps the fact
    failed: bool = False  # commands: also needs a failure word on its summary line


@dataclass
class Call:
    name: str
    args: dict[str, Any]
    command: str | None = None


@dataclass
class Truth:
    facts: list[Fact] = field(default_factory=list)
    lines: list[Fact] = field(default_factory=list)  # LINE_CATEGORIES

    def by_category(self, category: str) -> list[Fact]:
        return [f for f in self.facts if f.category == category]


def normalize(text: str) -> str:
    return re.sub(r"[\W_]+", " ", text.lower()).strip()


def key(text: str) -> str:
    """The normalized words of `text` that fit in KEY_CHARS (whole words only)."""
    words: list[str] = []
    size = 0
    for word in normalize(text).split():
        if words and size + len(word) > KEY_CHARS:
            break
        words.append(word)
        size += len(word) + 1
    return " ".join(words)


def kept(fact: Fact, summary: str) -> bool:
    """The matching rule, applied equally to every method."""
    for fact_key in fact.keys:
        if not fact_key:
            continue
        for line in summary.splitlines():
            padded = f" {normalize(line)} "
            if f" {fact_key} " in padded and (not fact.failed or _FAILURE_WORDS.search(line)):
                return True
    return False


def ground_truth(raw: list[dict[str, Any]]) -> Truth:
    calls: dict[str, Call] = {}
    modified: dict[str, None] = {}
    read: dict[str, None] = {}
    commands: dict[str, bool] = {}  # key → failed (last run wins)
    errors: dict[str, list[str]] = {}
    constraints: dict[str, None] = {}
    for message in raw:
        for call, text, failed in outcomes(message, calls):
            if call.command:
                commands[command_key(call.command)] = failed
            if failed:
                lines = informative_lines(text)
                if lines:
                    errors.setdefault(lines[0], lines)
                continue
            for path in _written(call):
                modified[_file_key(path)] = None
            for path in _read(call):
                read[_file_key(path)] = None
        if message.get("role") == "user":
            for sentence in _user_sentences(message):
                constraints[key(sentence)] = None
    truth = Truth()
    truth.facts += [Fact("modified_file", [k]) for k in modified]
    truth.facts += [Fact("read_file", [k]) for k in read if k not in modified]
    truth.facts += [Fact("command", [k], failed) for k, failed in commands.items()]
    truth.facts += [Fact("error", [key(line) for line in lines]) for lines in errors.values()]
    truth.facts += [Fact("constraint", [k]) for k in constraints]
    truth.lines += [Fact("error_line", [k]) for lines in errors.values() for k in _keys(lines)]
    return truth


def _keys(lines: list[str]) -> list[str]:
    return list(dict.fromkeys(key(line) for line in lines if key(line)))


def outcomes(message: dict[str, Any], calls: dict[str, Call]) -> Iterator[tuple[Call, str, bool]]:
    """The tool results of `message` as (call, text, failed); its calls join `calls`."""
    for call_id, name, args in _calls(message):
        calls[call_id] = Call(name, args, _command(name, args))
    for call_id, text, flagged in _results(message):
        call = calls.get(call_id, Call("", {}))
        yield call, text, _failed(call, text, flagged)


def command_key(command: str) -> str:
    return key(command.strip().splitlines()[0])


def informative_lines(text: str) -> list[str]:
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    found = [line for line in lines if _INFORMATIVE.match(line) or _TALLY.search(line)]
    if not found:  # the first line that is not framing, else the exit status itself
        found = [line for line in lines if not _FRAMING.match(line)][:1]
        found = found or [line for line in lines if _EXIT.search(line)][:1]
    return found


def _calls(message: dict[str, Any]) -> Iterator[tuple[str, str, dict[str, Any]]]:
    content = message.get("content")
    for block in content if isinstance(content, list) else ():
        if isinstance(block, dict) and block.get("type") == "tool_use":
            yield str(block.get("id")), str(block.get("name")), dict(block.get("input") or {})
    for call in message.get("tool_calls") or ():
        function = call.get("function") or {}
        try:
            args = json.loads(function.get("arguments") or "{}")
        except ValueError:
            args = {"input": function.get("arguments")}
        yield str(call.get("id")), str(function.get("name")), args if isinstance(args, dict) else {}


def _results(message: dict[str, Any]) -> Iterator[tuple[str, str, bool | None]]:
    """(call id, text, is_error flag or None when the shape has no flag)."""
    if message.get("role") == "tool":
        yield str(message.get("tool_call_id")), _text(message.get("content")), None
        return
    content = message.get("content")
    for block in content if isinstance(content, list) else ():
        if isinstance(block, dict) and block.get("type") == "tool_result":
            text = _text(block.get("content"))
            yield str(block.get("tool_use_id")), text, bool(block.get("is_error"))


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(str(b.get("text", "")) for b in content if isinstance(b, dict))
    return ""


def _command(name: str, args: dict[str, Any]) -> str | None:
    if name.lower() in {"bash", "shell", "exec_command", "run", "execute_bash", "terminal"}:
        value = args.get("command") or args.get("cmd")
        if isinstance(value, list):
            value = " ".join(str(v) for v in value)
        return value if isinstance(value, str) and value.strip() else None
    return None


def _failed(call: Call, text: str, flagged: bool | None) -> bool:
    if flagged:
        return True
    exit_match = _EXIT.search(text)
    if exit_match:
        return int(exit_match.group(1)) != 0
    if flagged is None and call.command:  # a shell result without any status: read its text
        return any(_INFORMATIVE.match(line.strip()) for line in text.splitlines())
    return False


def _written(call: Call) -> list[str]:
    name = call.name.lower()
    if name == "apply_patch":
        return _PATCH.findall(str(call.args.get("input", "")))
    if name == "run_ipython":
        return _IPYTHON_WRITE.findall(str(call.args.get("code", "")))
    if name == "str_replace_editor" and call.args.get("command") != "view":
        return _paths(call.args)
    return _paths(call.args) if name in _WRITE_TOOLS else []


def _read(call: Call) -> list[str]:
    name = call.name.lower()
    if name == "run_ipython":
        return _IPYTHON_READ.findall(str(call.args.get("code", "")))
    if name == "str_replace_editor" and call.args.get("command") == "view":
        return _paths(call.args)
    return _paths(call.args) if name in _READ_TOOLS else []


def _paths(args: dict[str, Any]) -> list[str]:
    return [str(args[k]) for k in _PATH_ARGS if isinstance(args.get(k), str) and args[k]]


def _file_key(path: str) -> str:
    return normalize(path.rstrip("/").rsplit("/", 1)[-1])


def _user_sentences(message: dict[str, Any]) -> Iterator[str]:
    return (s for s in user_sentences(message) if _DIRECTIVE.search(s))


def user_sentences(message: dict[str, Any]) -> Iterator[str]:
    """The sentences a person wrote in a user message (harness text, code and quotes left out)."""
    content = message.get("content")
    blocks = [content] if isinstance(content, str) else [
        b.get("text", "") for b in content or () if isinstance(b, dict) and b.get("type") == "text"
    ]  # fmt: skip
    for block in blocks:
        if not isinstance(block, str) or _HARNESS.match(block):
            continue
        text = _FENCE.sub(" ", _HARNESS_TAIL.sub("", block))
        text = "\n".join(
            x for x in text.splitlines() if not x.startswith((">", "|")) and not _TAGS_ONLY.match(x)
        )
        for sentence in _SPLIT.split(text):
            sentence = sentence.strip()
            if 12 <= len(sentence) <= 300:
                yield sentence
