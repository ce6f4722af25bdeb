from __future__ import annotations

from typing import Any

import pytest

from app.engine.render import Rendered
from app.engine.validate import (
    ContextInvariantError,
    check,
    validate_anthropic,
    validate_openai,
    validate_raw,
)

USE = {"type": "tool_use", "id": "t1", "name": "x", "input": {}}
RESULT = {"type": "tool_result", "tool_use_id": "t1", "content": "r"}
CALL = {"id": "c1", "type": "function", "function": {"name": "x", "arguments": "{}"}}


def _a(role: str, content: Any) -> dict[str, Any]:
    return {"role": role, "content": content}


class TestAnthropic:
    def test_valid_exchange_passes(self) -> None:
        assert (
            validate_anthropic([_a("user", "go"), _a("assistant", [USE]), _a("user", [RESULT])])
            == []
        )

    def test_consecutive_same_role_messages_pass(self) -> None:
        # The API combines them into one turn; parallel results may come one per message.
        second = {**USE, "id": "t2"}
        messages = [
            _a("user", "a"),
            _a("user", "b"),
            _a("assistant", [USE, second]),
            _a("user", [RESULT]),
            _a("user", [{**RESULT, "tool_use_id": "t2"}]),
        ]
        assert validate_anthropic(messages) == []

    def test_pending_call_at_the_end_passes(self) -> None:
        assert validate_anthropic([_a("user", "go"), _a("assistant", [USE])]) == []

    @pytest.mark.parametrize(
        ("messages", "problem"),
        [
            ([_a("assistant", "hi")], "first message is not user"),
            ([_a("user", "")], "empty"),
            ([_a("user", [{"type": "text", "text": ""}])], "empty"),
            ([_a("system", "x")], "not allowed"),
            ([_a("user", [RESULT])], "without its tool_use"),
            ([_a("user", "go"), _a("assistant", [USE]), _a("user", "no result")], "not answered"),
            (
                [
                    _a("user", "go"),
                    _a("assistant", [USE, {**USE, "id": "t2"}]),
                    _a("user", [RESULT, {"type": "text", "text": "x"}]),
                    _a("user", [{**RESULT, "tool_use_id": "t2"}]),
                ],
                "after other content",
            ),
            (
                [
                    _a("user", "go"),
                    _a("assistant", [USE]),
                    _a("user", [RESULT]),
                    _a("assistant", [USE]),
                ],
                "issued twice",
            ),
        ],
    )
    def test_violations_are_reported(self, messages: list[dict[str, Any]], problem: str) -> None:
        assert any(problem in p for p in validate_anthropic(messages))


class TestOpenAI:
    def test_valid_exchange_passes(self) -> None:
        messages = [
            _a("system", "s"),
            _a("user", "go"),
            {"role": "assistant", "content": None, "tool_calls": [CALL]},
            {"role": "tool", "tool_call_id": "c1", "content": "r"},
        ]
        assert validate_openai(messages) == []

    @pytest.mark.parametrize(
        ("messages", "problem"),
        [
            ([_a("user", "go"), _a("system", "late")], "system message after index 0"),
            ([{"role": "tool", "tool_call_id": "c1", "content": "r"}], "without its call"),
            (
                [{"role": "assistant", "content": None, "tool_calls": [CALL]}, _a("user", "?")],
                "not answered",
            ),
            ([{"role": "assistant", "content": None}], "empty message"),
        ],
    )
    def test_violations_are_reported(self, messages: list[dict[str, Any]], problem: str) -> None:
        assert any(problem in p for p in validate_openai(messages))

    def test_top_level_system_is_rejected(self) -> None:
        with pytest.raises(ContextInvariantError) as raised:
            check(Rendered("sys", [_a("user", "x")], None), "openai")
        assert "top-level system" in str(raised.value)


def test_raw_checks_pairing() -> None:
    assert validate_raw([_a("user", [RESULT])]) == [
        "message 0: tool result t1 without its call",
    ]
    assert validate_raw([_a("assistant", [USE]), _a("user", "x")]) == [
        "calls without a result: ['t1']"
    ]
    assert validate_raw([_a("user", "x"), _a("assistant", [USE])]) == []
