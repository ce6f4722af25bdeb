"""Walk a transcript in order and record facts: requests, constraints, decisions, tool traffic.

Both message shapes are read: Anthropic (`tool_use` / `tool_result` blocks, `is_error`) and
OpenAI (`tool_calls` on the assistant, `role: tool` with `tool_call_id`). A tool call is matched
to its result by id; a call whose result is missing is recorded as pending.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import replace

from app.core.deadline import check_deadline
from app.engine.text import content_text
from app.engine.types import Message
from app.summarizers.rule.facts import PINNED, Facts, Item, clip, normalize
from app.summarizers.rule.harness import aider_edits, split_user_text, stated_cwd
from app.summarizers.rule.outcomes import (
    error_lines,
    exit_code,
    failed_tally,
    first_error_line,
    joined,
)
from app.summarizers.rule.parse import parse_summary
from app.summarizers.rule.paths import absolute, infer_workdir
from app.summarizers.rule.scan import excerpt
from app.summarizers.rule.tools import ToolUse, classify_call

_FENCE = re.compile(r"```.*?(?:```|$)", re.DOTALL)
# Within one line: `^\s*` would rescan a run of blank lines from each of its newlines.
_TABLE_ROW = re.compile(r"^[ \t]*\|[^\n]*\|[ \t\r]*$", re.MULTILINE)
_SENTENCE = re.compile(r"(?<=[.!?])\s+(?=[A-Z\"'`(])|\n+")
_CONSTRAINT = re.compile(
    r"(?i)\b(?:must|mustn't|don't|do not|never|always|only|make sure|ensure|without|"
    r"shouldn't|should not|avoid|keep|stick to|not allowed|required|no longer|stop|not|no|"
    r"need to|needs to|has to|have to|careful|rather|remember|important|critical|crucial|"
    r"essential|circumstances)\b"
)
_DECISION = re.compile(
    r"(?i)\b(?:decided|decide to|we'll use|we will use|i'll use|i will use|let's use|"
    r"let's go with|going with|go with|instead of|switch(?:ed|ing)? to|chose|opted|"
    r"settled on|the plan is|rather than|we'll keep|i'll keep|prefer|switch(?:ed|ing)?|"
    r"from now on|replac(?:e|ed|ing) [^.]{1,60} with|migrat(?:e|ed|ing) [^.]{1,40} to)\b"
)
# A harness's standing instruction: a rule for every turn, not advice ("make sure" is mostly
# advice in SWE-agent's tips).
_STANDING = re.compile(
    r"(?i)\b(?:only|always|never|do not|don't|cannot|can't|must not|mustn't|should not|"
    r"shouldn't|not allowed|avoid)\b"
)
# Each user turn of SWE-agent repeats them: the first few of a message are the rules.
MAX_STANDING = 6
# Not the task: a short continuation ("continue implementation", "go on"; "Continue with the
# export route: add paging" is a task) or an opening constraint ("Don't touch app/tax.py").
_CONTINUATION = re.compile(
    r"(?i)^(?:(?:please|ok(?:ay)?|now|so),?\s+)?(?:continue|go on|keep going|carry on|proceed|"
    r"resume|go ahead)\b"
)
MAX_CONTINUATION_WORDS = 4
_CONSTRAINT_OPENER = re.compile(
    r"(?i)^(?:please\s+)?(?:don't|do not|never|always|must|make sure|avoid|remember)\b"
)
# Explicit decision words beat constraint words: "We decided to keep X" is a decision.
_DECIDED = re.compile(r"(?i)\b(?:decided|decide to|chose|opted|settled on|the plan is)\b")
REQUEST_CHARS = 200
# The focus's last step is a reminder, not a report.
STEP_CHARS = 120
# A failing run's error, location, comparison, tally and about eight test ids.
MAX_ERROR_CHARS = 800
# "Great." or "Thanks!" is not a request; "Add a regression test" (4 words) is.
MIN_REQUEST_WORDS = 3
# A pasted log can hold hundreds of sentences: the first three requests of a turn carry the ask.
MAX_REQUESTS_PER_MESSAGE = 3
TASK_CHARS = 400
EDITOR_OPENERS = {"open", "create"}
EDITOR_CHANGERS = {"edit", "insert"}
_SESSION = re.compile(r"Process running with session ID (\d+)")
# `mix test 2>&1 | tail -5` and `mix test` are one command for resolving its failures.
_REDIRECTS = re.compile(r" 2>(?:&1|/dev/null)")
_PAGER = re.compile(r"(?:tail|head)\b")


def sentences(text: str) -> list[str]:
    """Prose sentences: code fences and markdown table rows (documentation, not what someone
    asked or decided) are left out."""
    prose = _FENCE.sub(" ", _TABLE_ROW.sub("", text))
    return [s.strip() for s in _SENTENCE.split(prose) if len(s.strip()) > 3]


class _Walker:
    def __init__(self, facts: Facts) -> None:
        self.facts = facts
        self.order = 0
        self.calls: dict[str, ToolUse] = {}
        self.answered_calls: set[str] = set()
        self.last_text = {"user": -(10**9), "assistant": -(10**9)}
        self.edits: list[tuple[int, str]] = []
        self.last_request: str | None = None
        self.last_action: str | None = None
        self.cwd: str | None = None
        self.sessions: dict[str, ToolUse] = {}
        self.open_file: str | None = None  # SWE-agent's editor: the file `edit` changes
        self.failed_reads: dict[str, set[str]] = {}  # failing call → the files it tried to read

    def tick(self) -> int:
        self.order += 1
        return self.order

    def user_text(self, blocks: Sequence[str]) -> None:
        """One user turn: each text block is cleared of harness text on its own (Claude Code
        sends its caveat, the command wrapper and the user's words as separate blocks)."""
        text, command = self._without_harness(blocks)
        parts = sentences(text)
        if not parts:
            return
        self.last_text["user"] = self.tick()
        requests = [s for s in parts if _plain_request(s) and len(s.split()) >= MIN_REQUEST_WORDS]
        if self.facts.get("task") is None and (command or is_task(text)):
            # A slash command's expansion is its template talking: the command names the task.
            task = f"{command} (slash command)" if command else text
            self.facts.add(Item("task", clip(task, TASK_CHARS), self.order))
        else:
            for sentence in requests[:MAX_REQUESTS_PER_MESSAGE]:
                self.facts.add(Item("request", clip(sentence, REQUEST_CHARS), self.tick()))
        self.last_request = clip((requests or parts)[0], REQUEST_CHARS)
        for sentence in parts:
            self._user_sentence(sentence)
        error = first_error_line(text)
        if error:
            self.facts.add(Item("error", error, self.tick(), "open", detail="reported by user"))

    def _without_harness(self, blocks: Sequence[str]) -> tuple[str, str | None]:
        """The user's own words and the slash command they ran, if any; what the harness
        carried (cwd, a summary, standing rules, aider's edits) is read on the way."""
        kept = []
        command = None
        for raw in blocks:
            split = split_user_text(raw)
            command = split.command or command
            if "<local-command-stdout>" in raw:
                command = None  # a built-in command (/clear) ran locally: nothing expands
            self.cwd = split.cwd or self.cwd
            if split.carried_summary:
                self.carried_summary(split.carried_summary)
            self.standing(split.instructions)
            for path in aider_edits(raw):
                self.facts.add(Item("file", path, self.tick(), "modified", detail="aider"))
            kept.append(split.text)
        return "\n".join(t for t in kept if t), command

    def _user_sentence(self, sentence: str) -> None:
        if sentence.endswith("?"):
            self.facts.add(Item("question", clip(sentence), self.tick(), status="user"))
        elif _DECIDED.search(sentence):
            self.facts.add(Item("decision", clip(sentence), self.tick()))
        elif _CONSTRAINT.search(sentence):
            self.facts.add(Item("constraint", clip(sentence), self.tick()))
        elif _DECISION.search(sentence):
            self.facts.add(Item("decision", clip(sentence), self.tick()))

    def standing(self, instructions: str) -> None:
        """A harness's standing instructions: its rules (`_STANDING`) are constraints."""
        rules = [s for s in sentences(instructions) if _STANDING.search(s)]
        for rule in rules[:MAX_STANDING]:
            self.facts.add(Item("constraint", clip(rule, REQUEST_CHARS), self.tick(), "standing"))

    def carried_summary(self, summary: str) -> None:
        """A continued session's summary of its earlier part: read like a previous summary."""
        for item in parse_summary(_FENCE.sub("", summary)):  # code in it is not a fact
            if item.kind == "context" and item.text.endswith(":"):
                continue  # a heading of the carried summary, not a fact
            if item.kind not in PINNED:  # the task and focus stay the session's own
                self.facts.add(replace(item, status="carried") if item.kind == "context" else item)

    def assistant_text(self, text: str) -> None:
        parts = sentences(text)
        if not parts:
            return
        self.last_text["assistant"] = self.tick()
        self.last_action = clip(parts[-1], STEP_CHARS)
        for sentence in parts:
            if _DECISION.search(sentence):
                self.facts.add(Item("decision", clip(sentence), self.tick()))
            elif sentence.endswith("?"):
                self.facts.add(Item("question", clip(sentence), self.tick(), status="assistant"))

    def call(self, use: ToolUse) -> None:
        # Codex CLI polls a long-running command with `write_stdin(session_id=…)`: its output
        # and exit status belong to the command that started the session.
        started = self.sessions.get(str(use.args.get("session_id", "")))
        if started is not None and use.command is None:
            use = replace(started, call_id=use.call_id)
        use = self._editor_file(use)
        self.calls[use.call_id] = use
        self.last_action = f"ran `{use.command}`" if use.command else _describe(use)

    def _editor_file(self, use: ToolUse) -> ToolUse:
        """SWE-agent's editor: `open`/`create` choose the current file, `edit`/`insert` change
        it without naming it (as commands, `edit 287:295`, or as tools without a path)."""
        program = (
            (use.command or use.name).split(maxsplit=1)[0] if (use.command or use.name) else ""
        )
        if program in EDITOR_OPENERS and use.files:
            self.open_file = use.files[0][0]
        elif program in EDITOR_CHANGERS and self.open_file and not use.files:
            return replace(use, files=((self.open_file, "modified"),))
        return use

    def result(self, call_id: str, name: str | None, text: str, is_error: bool) -> None:
        known = self.calls.get(call_id)
        # A result whose call was folded earlier: only its text can say what happened.
        use = known or ToolUse(call_id, name or "tool", {}, (), None)
        self.answered_calls.add(call_id)
        order = self.tick()
        self.cwd = stated_cwd(text) or self.cwd
        if use.command and (session := _SESSION.search(text)):
            self.sessions[session.group(1)] = use
        code = exit_code(text) if use.command or known is None else None
        looks_failed = (
            use.command is not None
            or is_error
            or (code is not None and code != 0)
            or text.lstrip()[:6].lower() == "error:"
        )
        error = first_error_line(text) if looks_failed else None
        failed = (
            is_error
            or (code is not None and code != 0)
            or (code is None and (error is not None or (looks_failed and failed_tally(text))))
        )
        if use.command:
            status = f"exit {code}" if code is not None else ("failed" if failed else "ok")
            self.facts.add(Item("command", use.command, order, status))
        if failed:
            line = joined(error_lines(text), MAX_ERROR_CHARS) or f"{use.name} failed"
            self.facts.add(Item("error", line, order, "open", detail=use.label))
            self.failed_reads[use.label] = {p for p, status in use.files if status == "read"}
            return
        self._record_files(use, order)
        self._resolve(use, order)

    def pending(self) -> None:
        for call_id, use in self.calls.items():
            if call_id not in self.answered_calls:
                order = self.tick()
                if use.command:
                    self.facts.add(Item("command", use.command, order, "pending"))
                self._record_files(use, order)

    def _record_files(self, use: ToolUse, order: int) -> None:
        for path, status in use.files:
            # Only the tools that changed a file are worth naming; a read says nothing more.
            detail = use.name if status != "read" else ""
            self.facts.add(Item("file", path, order, status, detail=detail))
            if status != "read":
                self.edits.append((order, path))

    def _resolve(self, use: ToolUse, order: int) -> None:
        """Close the errors this success fixes: the same call or command (or a broader run of
        it, `pytest` after `pytest tests/a.py`), a call that failed on a file now written, or a
        read that failed on a file now read (it exists now)."""
        label = use.label
        written = {p for p, status in use.files if status != "read"}
        read = {p for p, status in use.files if status == "read"}
        sources = [
            source
            for source in self.facts.open_error_sources()
            if source == label
            or (use.command is not None and same_command(source, use.command))
            or written & set(source.split())
            or read & self.failed_reads.get(source, set())
        ]
        for source in sources:
            for item in self.facts.open_errors(source):
                edited = list(dict.fromkeys(p for o, p in self.edits if item.order < o < order))
                how = "rerun succeeded" if source == label else f"`{label}` succeeded"
                if edited:
                    how += " after editing " + ", ".join(f"`{p}`" for p in edited[-3:])
                self.facts.add(replace(item, status="resolved", resolution=how, order=order))

    def close_questions(self) -> None:
        """A question is answered once the other party has spoken after it."""
        for item in self.facts.items():
            if item.kind == "question":
                other = "assistant" if item.status == "user" else "user"
                if self.last_text[other] > item.order:
                    self.facts.remove(item)

    def workdir(self) -> None:
        """Name the session's working directory once, so the summary can list paths under it;
        a relative path is then the same file as its absolute form (one item, not two)."""
        known = self.facts.get("workdir")
        if known is None:
            paths = [i.text for i in self.facts.items() if i.kind == "file"]
            found = self.cwd or infer_workdir(paths)
            if not found:
                return
            known = Item("workdir", found.rstrip("/") or "/", self.tick())
            self.facts.add(known)
        for item in self.facts.items():
            path = absolute(item.text, known.text) if item.kind == "file" else item.text
            if path != item.text:
                self.facts.remove(item)
                self.facts.add(replace(item, text=path))

    def focus(self) -> None:
        request = self.last_request
        task = self.facts.get("task")
        if request and task and normalize(task.text).startswith(normalize(request)):
            request = None  # still the task itself: the Task line already says it
        if request and self.last_action:
            self.facts.add(Item("focus", f"{request} (last step: {self.last_action})", self.tick()))
        elif request or self.last_action:
            text = request or f"last step: {self.last_action}"
            self.facts.add(Item("focus", text, self.tick()))


def command_key(command: str) -> str:
    """A command without output plumbing (`2>&1`, `| tail -5`), whitespace collapsed.

    Whitespace is collapsed first, so no pattern scans a run of it; trailing pagers are
    dropped by walking back over `|`s, each segment read once."""
    command = " ".join(command.split())
    command = _REDIRECTS.sub("", command)  # once: repeating it is quadratic in nested ones
    end = len(command)
    while (bar := command.rfind("|", 0, end)) >= 0:
        if not _PAGER.match(command[bar + 1 : end].strip()):
            break
        end = bar
    return command[:end].strip()


def same_command(failed: str, succeeded: str) -> bool:
    """Whether `succeeded` reruns `failed`: equal, or one extends the other with arguments."""
    a, b = command_key(failed), command_key(succeeded)
    return a == b or a.startswith(b + " ") or b.startswith(a + " ")


def is_task(text: str) -> bool:
    """Whether a user turn can be the task: not opened by a constraint, not a short
    continuation."""
    if _CONSTRAINT_OPENER.match(text):
        return False
    return not (_CONTINUATION.match(text) and len(text.split()) <= MAX_CONTINUATION_WORDS)


def _plain_request(sentence: str) -> bool:
    """A request not already kept as a question, constraint or decision."""
    return not (
        sentence.endswith("?") or _CONSTRAINT.search(sentence) or _DECISION.search(sentence)
    )


def _describe(use: ToolUse) -> str:
    return f"{use.name} `{use.files[0][0]}`" if use.files else use.name


def extract(messages: Sequence[Message], facts: Facts) -> None:
    """Add the facts of `messages` (in order) to `facts`."""
    walker = _Walker(facts)
    for message in messages:
        check_deadline()  # a worker thread cannot be cancelled: it stops with its request
        _visit(walker, message)
    walker.pending()
    walker.close_questions()
    walker.focus()
    walker.workdir()


def _visit(walker: _Walker, message: Message) -> None:
    if message.role == "tool":
        body = excerpt(content_text(message.content))
        walker.result(message.tool_call_id or "", message.name, body, False)
        return
    if message.role == "system":
        return
    blocks = message.content if isinstance(message.content, list) else [message.content]
    texts = [t for t in (excerpt(_block_text(b)).strip() for b in blocks) if t]
    if texts and message.role == "user":
        walker.user_text(texts)
    elif texts:
        walker.assistant_text("\n".join(texts))
    for block in blocks:
        if not isinstance(block, dict):
            continue
        if block.get("type") == "tool_use":
            name, args = str(block.get("name", "")), block.get("input")
            walker.call(classify_call(str(block.get("id", "")), name, args))
        elif block.get("type") == "tool_result":
            body = excerpt(content_text(block.get("content", "")))
            walker.result(
                str(block.get("tool_use_id", "")), None, body, bool(block.get("is_error"))
            )
    for call in message.tool_calls or ():
        function = call.get("function") or {}
        name, args = str(function.get("name", "")), function.get("arguments")
        walker.call(classify_call(str(call.get("id", "")), name, args))


def _block_text(block: object) -> str:
    if isinstance(block, str):
        return block
    if isinstance(block, dict) and block.get("type") == "text":
        return str(block.get("text", ""))
    return ""
