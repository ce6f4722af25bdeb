"""The last gate: every rendered context is checked against what the provider accepts.

A violation here is a bug in the engine, never the user's fault: `check` raises
`ContextInvariantError` (a 500 with a log line beats a 400 from the provider later).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from app.engine.gemini_out import validate_gemini
from app.engine.render import Format, Rendered
from app.engine.responses import validate_responses

Wire = Sequence[Mapping[str, Any]]


class ContextInvariantError(RuntimeError):
    """The engine produced a context a provider would reject."""

    def __init__(self, violations: list[str]) -> None:
        super().__init__("; ".join(violations))
        self.violations = violations


def _is_block(value: Any) -> bool:
    return isinstance(value, (dict, Mapping))  # dict first: a plain dict skips the ABC check


def _blocks(message: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    content = message.get("content")
    return [b for b in content if _is_block(b)] if isinstance(content, list) else []


def _ids(message: Mapping[str, Any], kind: str, key: str) -> list[str]:
    return [str(b.get(key)) for b in _blocks(message) if b.get("type") == kind]


def _empty(content: Any) -> bool:
    if content is None:
        return True
    if isinstance(content, str):
        return not content.strip()
    if isinstance(content, list):
        return not content or any(
            _is_block(b) and b.get("type") == "text" and not str(b.get("text", "")).strip()
            for b in content
        )
    return False


def validate_anthropic(messages: Wire) -> list[str]:
    """Consecutive same-role messages are allowed (the API combines them into one turn), so a
    tool_use must be answered in the run of user messages right after its assistant message."""
    problems: list[str] = []
    if messages and messages[0].get("role") != "user":
        problems.append("first message is not user")
    turns = _AnthropicTurns()
    for index, message in enumerate(messages):
        role = message.get("role")
        if role not in ("user", "assistant"):
            problems.append(f"message {index}: role {role!r} not allowed")
        if _empty(message.get("content")):
            problems.append(f"message {index}: empty content or empty text block")
        blocks = _blocks(message)  # once per message: the lists below are read from it
        calls = [str(b.get("id")) for b in blocks if b.get("type") == "tool_use"]
        if role != "assistant" and calls:
            problems.append(f"message {index}: tool_use outside an assistant message")
        problems += turns.issue(index, calls)
        if role == "assistant":
            problems += turns.assistant(index, calls)
        else:
            problems += turns.user(index, message, blocks)
    return problems  # calls still open at the end: the newest, pending call


class _AnthropicTurns:
    """The pairing rule across turns: the results of an assistant message's calls come first
    in the user run right after it, and every call is answered there."""

    def __init__(self) -> None:
        self.seen: set[str] = set()
        self.open: set[str] = set()  # calls of the last assistant message, not answered yet
        self.last: set[str] = set()
        self.other_content = False  # the user turn (as the API combines it) has more than results

    def issue(self, index: int, calls: list[str]) -> list[str]:
        twice = bool(self.seen & set(calls))
        self.seen |= set(calls)
        return [f"message {index}: tool_use id issued twice"] if twice else []

    def assistant(self, index: int, calls: list[str]) -> list[str]:
        problems = []
        if self.open:
            problems.append(f"message {index}: tool_use {sorted(self.open)} not answered")
        self.open, self.last, self.other_content = set(calls), set(calls), False
        return problems

    def user(
        self, index: int, message: Mapping[str, Any], blocks: list[Mapping[str, Any]]
    ) -> list[str]:
        problems = []
        results = [str(b.get("tool_use_id")) for b in blocks if b.get("type") == "tool_result"]
        for result in results:
            if result not in self.last:
                problems.append(f"message {index}: tool_result {result} without its tool_use")
            if self.other_content:
                problems.append(f"message {index}: tool_result {result} after other content")
            self.open.discard(result)
        self.other_content = self.other_content or _has_other_content(message, blocks)
        if self.open and not results:
            problems.append(f"message {index}: tool_use {sorted(self.open)} not answered")
            self.open = set()
        return problems


def _has_other_content(message: Mapping[str, Any], blocks: list[Mapping[str, Any]]) -> bool:
    if isinstance(message.get("content"), str):
        return True
    return any(b.get("type") != "tool_result" for b in blocks)


def validate_openai(messages: Wire) -> list[str]:
    problems: list[str] = []
    open_calls: set[str] | None = None  # calls of the assistant message the tool run answers
    for index, message in enumerate(messages):
        role = message.get("role")
        if role == "system" and index:
            problems.append(f"message {index}: system message after index 0")
        if role not in ("system", "user", "assistant", "tool"):
            problems.append(f"message {index}: role {role!r} not allowed")
        if role == "tool":
            call = str(message.get("tool_call_id"))
            if open_calls is None or call not in open_calls:
                problems.append(f"message {index}: tool result {call} without its call")
            else:
                open_calls.discard(call)
        else:
            if open_calls:
                problems.append(f"message {index}: calls {sorted(open_calls)} not answered")
            open_calls = None
        calls = [str(c.get("id")) for c in message.get("tool_calls") or ()]
        if calls:
            open_calls = set(calls)
        if _empty(message.get("content")) and not calls:
            problems.append(f"message {index}: empty message")
    return problems  # calls still open at the end: the newest, pending call


def validate_raw(messages: Wire) -> list[str]:
    problems: list[str] = []
    issued: set[str] = set()
    answered: set[str] = set()
    for index, message in enumerate(messages):
        results = _ids(message, "tool_result", "tool_use_id")
        if message.get("tool_call_id"):
            results.append(str(message["tool_call_id"]))
        for result in results:
            if result not in issued:
                problems.append(f"message {index}: tool result {result} without its call")
            answered.add(result)
        calls = _ids(message, "tool_use", "id") + [
            str(c.get("id")) for c in message.get("tool_calls") or ()
        ]
        if calls and index == len(messages) - 1:
            answered |= set(calls)  # the newest, pending call
        issued |= set(calls)
    if issued - answered:
        problems.append(f"calls without a result: {sorted(issued - answered)}")
    return problems


def violations(rendered: Rendered, fmt: Format) -> list[str]:
    if fmt == "anthropic":
        return validate_anthropic(rendered.messages)
    if fmt == "openai":
        problems = validate_openai(rendered.messages)
        if rendered.system is not None:
            problems.append("openai output has a top-level system")
        if sum(m.get("role") == "system" for m in rendered.messages) > 1:
            problems.append("more than one system message")
        return problems
    if fmt == "gemini":
        problems = validate_gemini(rendered.messages)
        if rendered.system is not None and not isinstance(rendered.system, str):
            problems.append("gemini system is not a string")
        return problems
    if fmt == "openai_responses":
        problems = validate_responses(rendered.messages)
        if rendered.system is not None and not isinstance(rendered.system, str):
            problems.append("openai_responses system is not a string")
        return problems
    return validate_raw(rendered.messages)


def check(rendered: Rendered, fmt: Format) -> None:
    problems = violations(rendered, fmt)
    if problems:
        raise ContextInvariantError(problems)
