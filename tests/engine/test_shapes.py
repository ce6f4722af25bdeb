"""Message and tool validation: faithful to what was posted, precise about what is wrong."""

from __future__ import annotations

import copy
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from app.core.errors import InvalidMessage, InvalidTools
from app.engine.shapes import normalize_message, validate_tools

KNOWN_TYPES = {"text", "tool_use", "tool_result", "image"}
json_value = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=10),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3)
    ),
    max_leaves=6,
)
ids = st.text(min_size=1, max_size=12)
text_block = st.builds(lambda t: {"type": "text", "text": t}, st.text(max_size=40))
image_block = st.just({"type": "image", "source": {"type": "url", "url": "https://x.test/a.png"}})
unknown_block = st.builds(
    lambda kind, fields: {**fields, "type": kind},
    st.sampled_from(["thinking", "document", "server_tool_use", "image_url"])
    | st.text(min_size=1, max_size=15).filter(lambda kind: kind not in KNOWN_TYPES),
    st.dictionaries(st.text(max_size=8), json_value, max_size=3),
)
tool_use_block = st.builds(
    lambda i, n, inp: {"type": "tool_use", "id": i, "name": n, "input": inp},
    ids,
    ids,
    st.dictionaries(st.text(max_size=8), json_value, max_size=3),
)
tool_result_block = st.builds(
    lambda i, content: {"type": "tool_result", "tool_use_id": i, **content},
    ids,
    st.just({})
    | st.builds(lambda t: {"content": t}, st.text(max_size=40))
    | st.builds(
        lambda b: {"content": b}, st.lists(text_block | image_block | unknown_block, max_size=3)
    ),
)
tool_call = st.builds(
    lambda i, n, args: {"id": i, "type": "function", "function": {"name": n, "arguments": args}},
    ids,
    ids,
    st.text(max_size=30),
)


def _body(blocks: st.SearchStrategy[dict[str, Any]]) -> st.SearchStrategy[Any]:
    return st.text(max_size=60) | st.lists(blocks, max_size=4)


anthropic_message = st.one_of(
    st.fixed_dictionaries(
        {
            "role": st.just("user"),
            "content": _body(text_block | image_block | tool_result_block | unknown_block),
        }
    ),
    st.fixed_dictionaries(
        {
            "role": st.just("assistant"),
            "content": _body(text_block | tool_use_block | unknown_block),
        }
    ),
    st.fixed_dictionaries({"role": st.just("system"), "content": _body(text_block)}),
)
openai_message = st.one_of(
    st.fixed_dictionaries(
        {"role": st.sampled_from(["system", "user"]), "content": st.text()}, optional={"name": ids}
    ),
    st.fixed_dictionaries(
        {
            "role": st.just("assistant"),
            "content": st.none() | st.text(),
            "tool_calls": st.lists(tool_call, min_size=1, max_size=3),
        },
        optional={"refusal": st.none(), "audio": json_value},
    ),
    st.fixed_dictionaries(
        {"role": st.just("tool"), "tool_call_id": ids, "content": _body(text_block)}
    ),
)
extras = st.fixed_dictionaries(
    {},
    optional={
        "metadata": st.dictionaries(st.text(max_size=5), json_value, max_size=2),
        "client_id": ids,
        "cache_control": st.just({"type": "ephemeral"}),
    },
)
valid_message = st.builds(lambda m, e: {**m, **e}, anthropic_message | openai_message, extras)


class TestValidMessages:
    @given(valid_message, st.integers(min_value=0, max_value=500))
    def test_round_trips_exactly(self, raw: dict[str, Any], index: int) -> None:
        posted = copy.deepcopy(raw)
        message = normalize_message(raw, index)
        assert raw == posted  # the input is not modified
        expected_content = "" if raw["content"] is None else raw["content"]
        assert (message.role, message.content) == (raw["role"], expected_content)
        assert message.tool_calls == raw.get("tool_calls")
        assert message.tool_call_id == raw.get("tool_call_id")
        assert (message.name, message.client_id) == (raw.get("name"), raw.get("client_id"))
        extra = {k: v for k, v in raw.items() if k in {"refusal", "audio", "cache_control"}}
        expected_metadata = raw.get("metadata", {}) | ({"extra": extra} if extra else {})
        assert message.metadata == expected_metadata

    def test_assistant_with_tool_calls_may_omit_content(self) -> None:
        call = {"id": "c1", "type": "function", "function": {"name": "f", "arguments": "{}"}}
        assert normalize_message({"role": "assistant", "tool_calls": [call]}).content == ""

    def test_non_function_tool_calls_are_kept(self) -> None:
        call = {"id": "c1", "type": "custom", "custom": {"name": "grep", "input": "x"}}
        message = normalize_message({"role": "assistant", "content": "", "tool_calls": [call]})
        assert message.tool_calls == [call]


def _mutations(raw: dict[str, Any]) -> list[dict[str, Any]]:
    """Changes each guaranteed to make `raw` invalid, whatever its role and shape."""
    role = raw["role"]
    bad_blocks: list[Any] = [
        5,
        "text",
        {"text": "no type"},
        {"type": "text", "text": 3},
        {"type": "tool_use", "name": "n", "input": {}},
        {"type": "tool_use", "id": "i", "input": {}},
        {"type": "tool_use", "id": "i", "name": "n", "input": "str"},
        {"type": "tool_result", "content": "no id"},
        {"type": "tool_result", "tool_use_id": "t", "content": [{"text": "nested, no type"}]},
    ]
    content = raw["content"] if isinstance(raw["content"], list) else []
    changed = [
        {**raw, "role": "robot"},
        {**raw, "content": {"text": "object"}},
        {k: v for k, v in raw.items() if k not in ("content", "tool_calls")},
        {**raw, "metadata": ["not", "an", "object"]},
        {**raw, "name": 5},
        {**raw, "client_id": ""},
        *({**raw, "content": [*content, block]} for block in bad_blocks),
    ]
    if role == "tool":
        changed.append({k: v for k, v in raw.items() if k != "tool_call_id"})
    else:
        changed.append({**raw, "tool_call_id": "call_1"})
    if role == "assistant":
        changed.append({**raw, "tool_calls": [{"function": {"name": "f", "arguments": "{}"}}]})
        changed.append(
            {**raw, "tool_calls": [{"id": "c", "function": {"name": "f", "arguments": {}}}]}
        )
        changed.append({**raw, "content": [*content, {"type": "tool_result", "tool_use_id": "t"}]})
    else:
        call = {"id": "c", "type": "function", "function": {"name": "f", "arguments": "{}"}}
        changed.append({**raw, "tool_calls": [call]})
    forbidden = {
        "user": {"type": "tool_use", "id": "i", "name": "n", "input": {}},
        "system": {"type": "image", "source": {}},
    }
    if role in forbidden:
        changed.append({**raw, "content": [*content, forbidden[role]]})
    return changed


class TestInvalidMessages:
    @given(valid_message, st.integers(min_value=0, max_value=500), st.data())
    def test_every_mutation_is_an_invalid_message_with_a_path(
        self, raw: dict[str, Any], index: int, data: st.DataObject
    ) -> None:
        mutated = data.draw(st.sampled_from(_mutations(raw)))
        with pytest.raises(InvalidMessage) as caught:
            normalize_message(mutated, index)
        details = caught.value.details
        assert caught.value.status_code == 422 and caught.value.code == "invalid_message"
        assert details["index"] == index
        assert details["path"].startswith(f"messages[{index}]")
        assert details["reason"] and details["path"] in caught.value.message

    @pytest.mark.parametrize(
        ("raw", "path"),
        [
            ({"role": "developer", "content": "x"}, "messages[3].role"),
            ({"role": "user"}, "messages[3].content"),
            ({"role": "tool", "content": "x"}, "messages[3].tool_call_id"),
            (
                {"role": "user", "content": [{"type": "image"}, {"type": "tool_result"}]},
                "messages[3].content[1].tool_use_id",
            ),
            (
                {
                    "role": "user",
                    "content": [
                        {
                            "type": "tool_result",
                            "tool_use_id": "t",
                            "content": [{"type": "text", "text": None}],
                        }
                    ],
                },
                "messages[3].content[0].content[0].text",
            ),
            (
                {
                    "role": "assistant",
                    "content": None,
                    "tool_calls": [{"id": "c", "function": {"arguments": "{}"}}],
                },
                "messages[3].tool_calls[0].function.name",
            ),
            (
                {"role": "assistant", "content": [{"type": "tool_result", "tool_use_id": "t"}]},
                "messages[3].content[0].type",
            ),
            (
                {"role": "user", "content": "x", "extra": 1, "metadata": {"extra": 2}},
                "messages[3].metadata.extra",
            ),
            ("not a message", "messages[3]"),
        ],
    )
    def test_reports_the_exact_path(self, raw: Any, path: str) -> None:
        with pytest.raises(InvalidMessage) as caught:
            normalize_message(raw, 3)
        assert caught.value.details["path"] == path


class TestTools:
    def test_accepts_both_shapes_and_server_tools_unchanged(self) -> None:
        tools = [
            {"name": "bash", "description": "Run", "input_schema": {"type": "object"}},
            {"type": "function", "function": {"name": "get_weather", "parameters": {}}},
            {"type": "web_search_20250305", "name": "web_search", "max_uses": 5},
        ]
        assert validate_tools(copy.deepcopy(tools)) == tools
        assert validate_tools([]) == []

    @pytest.mark.parametrize(
        ("tools", "path"),
        [
            ({"name": "x"}, "tools"),
            (["bash"], "tools[0]"),
            ([{"input_schema": {}}], "tools[0].name"),
            ([{"name": "bash"}], "tools[0].input_schema"),
            ([{"type": "function", "function": {"parameters": {}}}], "tools[0].function.name"),
            (
                [{"type": "function", "function": {"name": "f", "parameters": "x"}}],
                "tools[0].function.parameters",
            ),
            (
                [{"name": "a", "input_schema": {}}, {"name": "a", "input_schema": {}}],
                "tools[1].name",
            ),
            ([{"name": "a", "input_schema": {}, "description": 3}], "tools[0].description"),
        ],
    )
    def test_rejects_with_path(self, tools: Any, path: str) -> None:
        with pytest.raises(InvalidTools) as caught:
            validate_tools(tools)
        assert caught.value.status_code == 422 and caught.value.code == "invalid_tools"
        assert caught.value.details["path"] == path
