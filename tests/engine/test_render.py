from __future__ import annotations

from typing import Any

from app.core.context_settings import ContextSettings
from app.engine.assemble import AssemblyInput, assemble
from app.engine.render import CONTINUATION_TEXT, Format, render, render_tools
from app.engine.types import Message
from tests.engine.strategies import FakeCounter, make_message, openai_call

COUNTER = FakeCounter()


def _render(messages: list[Message], fmt: str, **kwargs: object) -> dict:  # type: ignore[type-arg]
    options = {
        "system_prompt": None,
        "summary": None,
        "placement": "system",
        "tools": None,
        **kwargs,
    }
    rendered = render(messages, fmt, **options)  # type: ignore[arg-type]
    return {"system": rendered.system, "messages": rendered.messages, "tools": rendered.tools}


OPENAI_HISTORY = [
    make_message(1, "user", "list files"),
    make_message(
        2,
        "assistant",
        "Sure.",
        tool_calls=[openai_call("c1", "ls", {"dir": "."}), openai_call("c2", "ls", "{not json")],
    ),
    make_message(3, "tool", "a.py", tool_call_id="c1"),
    make_message(4, "tool", "b.py", tool_call_id="c2"),
    make_message(5, "assistant", "Two files."),
]
ANTHROPIC_HISTORY = [
    make_message(
        1,
        "user",
        [
            {"type": "text", "text": "look"},
            {
                "type": "image",
                "source": {"type": "base64", "media_type": "image/png", "data": "AAAA"},
            },
        ],
    ),
    make_message(
        2,
        "assistant",
        [
            {"type": "text", "text": "Reading."},
            {"type": "tool_use", "id": "t1", "name": "read", "input": {"p": 1}},
            {"type": "tool_use", "id": "t2", "name": "read", "input": {"p": 2}},
        ],
    ),
    make_message(
        3,
        "user",
        [
            {"type": "tool_result", "tool_use_id": "t1", "content": "one"},
            {
                "type": "tool_result",
                "tool_use_id": "t2",
                "content": [{"type": "text", "text": "two"}],
            },
            {"type": "text", "text": "thanks"},
        ],
    ),
]


THINKING = {"type": "thinking", "thinking": "private: try b", "signature": "c2lnbmF0dXJl"}
REDACTED = {"type": "redacted_thinking", "data": "ZW5jcnlwdGVk"}
THINKING_HISTORY = [
    make_message(1, "user", "go"),
    make_message(
        2,
        "assistant",
        [THINKING, REDACTED, {"type": "tool_use", "id": "t1", "name": "ls", "input": {}}],
    ),
    make_message(3, "user", [{"type": "tool_result", "tool_use_id": "t1", "content": "a.py"}]),
    make_message(4, "assistant", [THINKING, {"type": "text", "text": "Done."}]),
]


class TestAnthropic:
    def test_openai_tool_calls_become_tool_use_and_one_user_message_per_result(self) -> None:
        out = _render(OPENAI_HISTORY, "anthropic")["messages"]
        assert [m["role"] for m in out] == ["user", "assistant", "user", "user", "assistant"]
        assert out[1]["content"] == [
            {"type": "text", "text": "Sure."},
            {"type": "tool_use", "id": "c1", "name": "ls", "input": {"dir": "."}},
            {"type": "tool_use", "id": "c2", "name": "ls", "input": {"_raw": "{not json"}},
        ]
        assert out[2]["content"] == [
            {"type": "tool_result", "tool_use_id": "c1", "content": "a.py"}
        ]
        assert out[3]["content"] == [
            {"type": "tool_result", "tool_use_id": "c2", "content": "b.py"}
        ]

    def test_consecutive_same_role_messages_are_not_merged(self) -> None:
        history = [
            make_message(1, "user", "a"),
            make_message(2, "user", "b"),
            make_message(3, "assistant", "c"),
        ]
        out = _render(history, "anthropic")["messages"]
        assert out[:2] == [{"role": "user", "content": "a"}, {"role": "user", "content": "b"}]

    def test_stored_messages_are_sent_as_stored(self) -> None:
        rendered = render(
            ANTHROPIC_HISTORY,
            "anthropic",
            system_prompt=None,
            summary=None,
            placement="system",
            tools=None,
        )
        assert rendered.messages == [
            {"role": m.role, "content": m.content} for m in ANTHROPIC_HISTORY
        ]
        assert rendered.sources == [m.id for m in ANTHROPIC_HISTORY]

    def test_results_of_one_call_come_before_other_content_of_the_combined_turn(self) -> None:
        uses: list[dict[str, Any]] = [
            {"type": "tool_use", "id": i, "name": "x", "input": {}} for i in ("c1", "c2")
        ]
        history = [
            make_message(1, "user", "go"),
            make_message(2, "assistant", uses),
            make_message(
                3,
                "user",
                [
                    {"type": "tool_result", "tool_use_id": "c1", "content": "one"},
                    {"type": "text", "text": "and"},
                ],
            ),
            make_message(4, "user", [{"type": "tool_result", "tool_use_id": "c2", "content": "2"}]),
        ]
        rendered = render(
            history, "anthropic", system_prompt=None, summary=None, placement="system", tools=None
        )
        assert rendered.sources == ["m1", "m2", "m3", "m4", "m3"]  # m3's text after the results
        assert rendered.messages[-1] == {
            "role": "user",
            "content": [{"type": "text", "text": "and"}],
        }

    def test_thinking_blocks_are_kept_byte_for_byte(self) -> None:
        out = _render(THINKING_HISTORY, "anthropic")["messages"]
        assert out[1]["content"] == THINKING_HISTORY[1].content

    def test_history_starting_with_assistant_gets_a_continuation_message(self) -> None:
        out = _render([make_message(5, "assistant", "where were we")], "anthropic")["messages"]
        assert out[0] == {"role": "user", "content": CONTINUATION_TEXT}

    def test_results_move_right_after_their_call_and_come_first(self) -> None:
        history = [
            make_message(
                1, "assistant", [{"type": "tool_use", "id": "t1", "name": "x", "input": {}}]
            ),
            make_message(2, "user", "by the way"),
            make_message(3, "assistant", "noted"),
            make_message(
                4,
                "user",
                [
                    {"type": "text", "text": "result:"},
                    {"type": "tool_result", "tool_use_id": "t1", "content": "r"},
                ],
            ),
        ]
        out = _render(history, "anthropic")["messages"]
        assert out[2]["content"][0] == {"type": "tool_result", "tool_use_id": "t1", "content": "r"}

    def test_summary_in_system(self) -> None:
        rendered = _render(OPENAI_HISTORY, "anthropic", system_prompt="You are X.", summary="S1")
        assert rendered["system"] == "You are X.\n\nSummary of earlier conversation:\nS1"

    def test_summary_as_a_message_pair(self) -> None:
        rendered = _render(
            OPENAI_HISTORY,
            "anthropic",
            system_prompt="You are X.",
            summary="S1",
            placement="messages",
        )
        assert rendered["system"] == "You are X."
        assert rendered["messages"][0] == {
            "role": "user",
            "content": "[Summary of earlier conversation]\nS1",
        }
        assert rendered["messages"][1] == {"role": "assistant", "content": "Understood."}


class TestOpenAI:
    def test_thinking_blocks_are_dropped_never_turned_into_text(self) -> None:
        out = _render(THINKING_HISTORY, "openai")["messages"]
        assert [m["role"] for m in out] == ["user", "assistant", "tool", "assistant"]
        assert out[1]["content"] is None and out[1]["tool_calls"][0]["id"] == "t1"
        assert out[3]["content"] == "Done."
        assert "signature" not in str(out) and "private" not in str(out)

    def test_system_and_summary_are_the_first_message(self) -> None:
        rendered = _render(ANTHROPIC_HISTORY, "openai", system_prompt="You are X.", summary="S1")
        assert rendered["system"] is None
        assert rendered["messages"][0] == {
            "role": "system",
            "content": "You are X.\n\nSummary of earlier conversation:\nS1",
        }

    def test_anthropic_blocks_become_tool_calls_tool_messages_and_parts(self) -> None:
        out = _render(ANTHROPIC_HISTORY, "openai")["messages"]
        assert out[0] == {
            "role": "user",
            "content": [
                {"type": "text", "text": "look"},
                {"type": "image_url", "image_url": {"url": "data:image/png;base64,AAAA"}},
            ],
        }
        assert out[1] == {
            "role": "assistant",
            "content": "Reading.",
            "tool_calls": [
                {
                    "id": "t1",
                    "type": "function",
                    "function": {"name": "read", "arguments": '{"p": 1}'},
                },
                {
                    "id": "t2",
                    "type": "function",
                    "function": {"name": "read", "arguments": '{"p": 2}'},
                },
            ],
        }
        assert out[2:] == [
            {"role": "tool", "tool_call_id": "t1", "content": "one"},
            {"role": "tool", "tool_call_id": "t2", "content": "two"},
            {"role": "user", "content": "thanks"},
        ]

    def test_openai_arguments_round_trip_unchanged(self) -> None:
        out = _render(OPENAI_HISTORY, "openai")["messages"]
        assert out[1]["tool_calls"][1]["function"]["arguments"] == "{not json"


class TestRawAndTools:
    def test_raw_is_the_stored_messages(self) -> None:
        rendered = _render(OPENAI_HISTORY, "raw", system_prompt="sys")
        assert rendered["system"] == "sys"
        assert rendered["messages"][2] == {"role": "tool", "content": "a.py", "tool_call_id": "c1"}

    def test_tools_are_converted_both_ways(self) -> None:
        anthropic_tool = {"name": "read", "description": "Read", "input_schema": {"type": "object"}}
        openai_tool = {
            "type": "function",
            "function": {"name": "run", "description": "Run", "parameters": {"type": "object"}},
        }
        assert render_tools([anthropic_tool, openai_tool], "anthropic") == [
            anthropic_tool,
            {"name": "run", "description": "Run", "input_schema": {"type": "object"}},
        ]
        assert render_tools([anthropic_tool, openai_tool], "openai") == [
            {
                "type": "function",
                "function": {
                    "name": "read",
                    "description": "Read",
                    "parameters": {"type": "object"},
                },
            },
            openai_tool,
        ]


class TestSystemMessagesMidHistory:
    def test_stored_system_message_becomes_a_counted_user_note(self) -> None:
        history = [
            make_message(1, "user", "hi"),
            make_message(2, "assistant", "yo"),
            make_message(3, "system", "Be terse."),
        ]
        formats: tuple[Format, ...] = ("anthropic", "openai")
        for fmt in formats:
            result = assemble(
                AssemblyInput(
                    messages=tuple(history),
                    context_window=0,
                    max_tokens=1000,
                    format=fmt,
                    settings=ContextSettings(cache_breakpoints=False),  # plain content
                ),
                COUNTER,
            )
            assert result.messages[-1] == {"role": "user", "content": "[system] Be terse."}
            assert result.explain[-1].tokens == 4 + COUNTER.count_text("[system] Be terse.")

    def test_raw_keeps_it_as_stored(self) -> None:
        history = [make_message(1, "user", "hi"), make_message(2, "system", "Be terse.")]
        result = assemble(
            AssemblyInput(
                messages=tuple(history),
                context_window=0,
                max_tokens=1000,
                format="raw",
                settings=ContextSettings(),
            ),
            COUNTER,
        )
        assert result.messages[-1] == {"role": "system", "content": "Be terse."}


def test_openai_image_parts_become_anthropic_image_blocks() -> None:
    parts: list[dict[str, Any]] = [
        {"type": "text", "text": "what is this"},
        {"type": "image_url", "image_url": {"url": "data:image/jpeg;base64,QUJD"}},
        {"type": "image_url", "image_url": {"url": "https://example.com/cat.png"}},
    ]
    out = _render([make_message(1, "user", parts)], "anthropic")["messages"]
    assert out[0]["content"][1:] == [
        {"type": "image", "source": {"type": "base64", "media_type": "image/jpeg", "data": "QUJD"}},
        {"type": "image", "source": {"type": "url", "url": "https://example.com/cat.png"}},
    ]
