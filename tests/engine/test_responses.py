"""`format=openai_responses` by example: rendering, the validator, ingestion details."""

from __future__ import annotations

from typing import Any

import pytest

from app.core.errors import DanglingReasoning, InvalidItem
from app.engine.assemble import AssemblyInput, assemble
from app.engine.items import item_type, normalize_posted
from app.engine.render import render, render_tools
from app.engine.responses import validate_responses
from app.engine.types import Message
from tests.engine.strategies import FakeCounter, make_message, openai_call, stored_items
from tests.support.responses_items import said, typed

CALL = {"type": "function_call", "call_id": "c1", "name": "run", "arguments": "{}"}
OUTPUT = {"type": "function_call_output", "call_id": "c1", "output": "ok"}
REASONING = {"type": "reasoning", "id": "rs_1", "summary": []}


def items_of(messages: list[Message], **options: Any) -> list[dict[str, Any]]:
    defaults: dict[str, Any] = {"system_prompt": None, "summary": None, "placement": "system"}
    out = render(messages, "openai_responses", tools=None, **(defaults | options))
    return out.messages


class TestValidator:
    @pytest.mark.parametrize(
        ("items", "problem"),
        [
            ([OUTPUT], "without its call"),
            ([said("user", "x"), REASONING], "reasoning not followed"),
            ([REASONING, said("user", "x")], "reasoning not followed"),
            ([CALL, said("user", "x")], "not answered"),
            ([CALL, OUTPUT, OUTPUT], "without its call"),
            ([CALL, OUTPUT, CALL, OUTPUT], "issued twice"),
            ([{"type": "message", "role": "user", "content": []}], "empty message"),
            ([said("user", " ")], "empty text part"),
            ([said("assistant", "x") | {"role": "system"}], "role 'system' not allowed"),
            ([{"type": "message", "role": "user", "content": [{"type": "text"}]}], "'text'"),
            ([{"type": "item_reference", "id": "x"}], "not allowed"),
            ([{**CALL, "arguments": {}}, OUTPUT], "arguments is not a string"),
        ],
    )
    def test_rejects(self, items: list[dict[str, Any]], problem: str) -> None:
        problems = validate_responses(items)
        assert problems and any(problem in p for p in problems), problems

    def test_accepts_a_pending_call_and_parallel_outputs(self) -> None:
        second = {**CALL, "call_id": "c2"}
        assert validate_responses([said("user", "go"), REASONING, CALL, second]) == []
        outputs = [OUTPUT, {**OUTPUT, "call_id": "c2"}][::-1]
        assert validate_responses([said("user", "go"), CALL, second, *outputs]) == []


class TestRender:
    def test_system_and_summary_placement(self) -> None:
        messages = [make_message(1, "user", "hi")]
        out = render(
            messages,
            "openai_responses",
            system_prompt="S",
            summary="earlier",
            placement="system",
            tools=None,
        )
        assert out.system == "S\n\nSummary of earlier conversation:\nearlier"
        assert out.messages == [typed("hi")]
        pair = items_of(messages, summary="earlier", placement="messages")
        assert pair[:2] == [
            said("user", "[Summary of earlier conversation]\nearlier"),
            said("assistant", "Understood."),
        ]

    def test_no_continuation_turn_and_system_messages_become_user_notes(self) -> None:
        messages = [make_message(1, "assistant", "resumed"), make_message(2, "system", "terse")]
        assert items_of(messages) == [said("assistant", "resumed"), typed("terse")]

    def test_anthropic_blocks_become_items(self) -> None:
        image = {"type": "image", "source": {"type": "url", "url": "https://x/y.png"}}
        use = {"type": "tool_use", "id": "t1", "name": "read", "input": {"p": "a"}}
        result = {"type": "tool_result", "tool_use_id": "t1", "content": ""}
        messages = [
            make_message(1, "user", [image, {"type": "text", "text": "see"}]),
            make_message(2, "assistant", [{"type": "text", "text": "a"}, use]),
            make_message(3, "user", [result, {"type": "text", "text": "next"}]),
        ]
        assert items_of(messages) == [
            {
                "type": "message",
                "role": "user",
                "content": [
                    {"type": "input_image", "image_url": "https://x/y.png", "detail": "auto"},
                    {"type": "input_text", "text": "see"},
                ],
            },
            said("assistant", "a"),
            {"type": "function_call", "call_id": "t1", "name": "read", "arguments": '{"p": "a"}'},
            {"type": "function_call_output", "call_id": "t1", "output": "(no output)"},
            said("user", "next"),
        ]

    def test_reasoning_of_a_call_left_out_goes_too(self) -> None:
        call = openai_call("c1", "run", {})
        messages = [
            make_message(1, "user", "go"),
            make_message(2, "assistant", [REASONING], tool_calls=[call]),
            make_message(3, "user", "never mind"),
        ]
        request = AssemblyInput(
            messages=messages, context_window=100_000, format="openai_responses"
        )
        result = assemble(request, FakeCounter())
        assert result.messages == [typed("go"), typed("never mind")]

    def test_tools(self) -> None:
        flat = {"type": "function", "name": "f", "parameters": {"type": "object"}}
        server = {"type": "web_search_20250305", "name": "web_search"}
        assert render_tools([flat, server], "openai_responses") == [flat, server]
        assert render_tools([flat], "anthropic") == [
            {"name": "f", "description": "", "input_schema": {"type": "object"}}
        ]
        assert render_tools([flat], "openai") == [
            {
                "type": "function",
                "function": {"name": "f", "description": "", "parameters": {"type": "object"}},
            }
        ]
        assert render_tools([flat], "raw") == [flat]


class TestIngest:
    def test_which_entries_are_items(self) -> None:
        assert item_type(CALL) == "function_call"
        assert item_type({"type": "custom_tool_call"}) == "custom_tool_call"
        assert item_type({"role": "user", "content": [{"type": "input_text", "text": "x"}]})
        assert item_type({"role": "user", "content": [{"type": "text", "text": "x"}]}) is None
        assert item_type({"role": "user", "content": "x", "type": "note"}) is None  # as today
        parts = [{"type": "output_text", "text": "x"}]
        chat = {"role": "assistant", "content": parts, "tool_calls": []}
        assert item_type(chat) is None  # a Chat message with unknown parts, kept as posted
        assert item_type({"role": "developer", "content": "be terse"}) == "message"

    def test_developer_and_images(self) -> None:
        image = {"type": "input_image", "image_url": "data:image/png;base64,AA", "detail": "low"}
        posted = normalize_posted(
            [
                {"type": "message", "role": "developer", "content": "be terse"},
                {"role": "user", "content": [image]},
            ]
        )
        developer, user = (p.message for p in posted)
        assert (developer.role, developer.content) == ("system", "be terse")
        assert developer.metadata["extra"]["items"][0]["role"] == "developer"
        url = {"url": "data:image/png;base64,AA", "detail": "low"}
        assert user.content == [{"type": "image_url", "image_url": url}]
        assert items_of(stored_items([{"role": "user", "content": [image]}])) == [
            {"type": "message", "role": "user", "content": [image]}
        ]

    def test_a_group_takes_its_first_client_id(self) -> None:
        posted = normalize_posted(
            [{**REASONING, "client_id": "a"}, {**CALL, "client_id": "b"}, OUTPUT]
        )
        assert posted[0].message.client_id == "a"
        assert posted[0].message.metadata["extra"]["items"] == [{"client_ids": ["b"]}]

    @pytest.mark.parametrize(
        ("items", "error", "path"),
        [
            ([said("assistant", "x"), REASONING], DanglingReasoning, "messages[1]"),
            ([{**CALL, "metadata": {"extra": 1}}], InvalidItem, "messages[0].metadata.extra"),
            ([{**CALL, "client_id": ""}], InvalidItem, "messages[0].client_id"),
            ([{**OUTPUT, "output": None}], InvalidItem, "messages[0].output"),
            (
                [{"type": "message", "role": "system", "content": [{"type": "input_image"}]}],
                InvalidItem,
                "messages[0].content[0].type",
            ),
        ],
    )
    def test_errors_name_the_path(
        self, items: list[dict[str, Any]], error: type[Exception], path: str
    ) -> None:
        with pytest.raises(error) as raised:
            normalize_posted(items)
        assert raised.value.details["path"] == path  # type: ignore[attr-defined]
