"""Gemini in and out (app/engine/gemini_in.py, gemini_out.py): contents round trip byte for
byte through storage, `thoughtSignature` included; a functionCall / functionResponse pair is
a tool pair in every format; every output validates against its provider's official types."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from app.core.context_settings import ContextSettings
from app.core.errors import InvalidItem, UnmatchedCallOutput
from app.engine.assemble import AssemblyInput, AssemblyResult, assemble
from app.engine.gemini_out import validate_gemini
from app.engine.items import parse_messages
from app.engine.render import render
from tests.engine.strategies import FakeCounter, histories, settings_strategy
from tests.support.media import b64, png
from tests.support.official_types import (
    assert_official_anthropic,
    assert_official_chat,
    assert_official_gemini,
    assert_official_items,
)

OFFICIAL = {
    "anthropic": assert_official_anthropic,
    "openai": assert_official_chat,
    "openai_responses": assert_official_items,
    "gemini": assert_official_gemini,
}
SIGNATURE = b64(b"opaque thought signature bytes")
WEATHER_TOOL = {
    "functionDeclarations": [
        {
            "name": "weather",
            "description": "Weather for a city",
            "parameters": {"type": "OBJECT", "properties": {"city": {"type": "STRING"}}},
        }
    ]
}
CONVERSATION: list[dict[str, Any]] = [
    {
        "role": "user",
        "parts": [
            {"text": "Weather in Paris and Rome? Chart attached."},
            {"inlineData": {"mimeType": "image/png", "data": png(8, 8)}},
            {"inlineData": {"mimeType": "video/mp4", "data": b64(b"\x00\x00\x00\x18ftypmp42")}},
        ],
    },
    {
        "role": "model",
        "parts": [
            {"text": "I should look both up.", "thought": True, "thoughtSignature": SIGNATURE},
            {
                "functionCall": {"name": "weather", "args": {"city": "Paris"}},
                "thoughtSignature": SIGNATURE,
            },
            {"functionCall": {"name": "weather", "args": {"city": "Rome"}}},
        ],
    },
    {
        "role": "user",
        "parts": [
            {"functionResponse": {"name": "weather", "response": {"output": "sunny, 21C"}}},
            {"functionResponse": {"name": "weather", "response": {"temp": 25, "sky": "clear"}}},
        ],
    },
    {
        "role": "model",
        "parts": [
            {"executableCode": {"language": "PYTHON", "code": "print(21 + 25)"}},
            {"codeExecutionResult": {"outcome": "OUTCOME_OK", "output": "46\n"}},
            {"text": "Paris is sunny, Rome is clear.", "thoughtSignature": SIGNATURE},
        ],
    },
    {
        "role": "user",
        "parts": [
            {"text": "And this file?"},
            {
                "fileData": {
                    "mimeType": "application/pdf",
                    "fileUri": "https://generativelanguage.googleapis.com/v1beta/files/abc",
                }
            },
        ],
    },
]


def context(raw: list[dict[str, Any]], fmt: str, tools: Any = None) -> AssemblyResult:
    counter = FakeCounter()
    messages = [m.counted(counter.count_message(m)) for m in parse_messages(raw)]
    request = AssemblyInput(
        messages=messages,
        context_window=1_000_000,
        format=fmt,  # type: ignore[arg-type]
        settings=ContextSettings(cache_breakpoints=False),
        tools=tools,
        system_prompt="Be brief.",
    )
    return assemble(request, counter)


def test_contents_round_trip_byte_for_byte() -> None:
    posted = copy.deepcopy(CONVERSATION)
    result = context(posted, "gemini", tools=[WEATHER_TOOL, {"googleSearch": {}}])
    assert result.messages == CONVERSATION
    assert posted == CONVERSATION  # nothing posted was changed in place
    assert result.system == "Be brief."
    assert result.tools == [WEATHER_TOOL, {"googleSearch": {}}]
    assert_official_gemini(result.messages, result.system, result.tools)


def test_the_sdks_snake_case_comes_back_camel_case() -> None:
    snake = [
        {"role": "user", "parts": [{"text": "hi"}]},
        {
            "role": "model",
            "parts": [
                {
                    "function_call": {"name": "weather", "args": {"city": "Oslo"}, "id": "c1"},
                    "thought_signature": SIGNATURE,
                }
            ],
        },
        {
            "role": "user",
            "parts": [{"function_response": {"name": "weather", "response": {"output": "snow"}}}],
        },
    ]
    result = context(snake, "gemini")
    assert result.messages[1]["parts"] == [
        {
            "functionCall": {"name": "weather", "args": {"city": "Oslo"}, "id": "c1"},
            "thoughtSignature": SIGNATURE,
        }
    ]
    # The response posted without an id answers the call of that name, and says so by id.
    assert result.messages[2]["parts"][0]["functionResponse"]["id"] == "c1"
    assert_official_gemini(result.messages)


@pytest.mark.parametrize("fmt", ["anthropic", "openai", "openai_responses"])
def test_other_formats_carry_the_pairs_and_never_the_thoughts(fmt: str) -> None:
    result = context(CONVERSATION, fmt, tools=[WEATHER_TOOL, {"googleSearch": {}}])
    OFFICIAL[fmt](result.messages)
    sent = json.dumps(result.messages, ensure_ascii=False)
    assert "I should look both up." not in sent and SIGNATURE not in sent
    assert "print(21 + 25)" in sent and "[code result: OUTCOME_OK]" in sent  # readable notes
    assert '\\"temp\\": 25' in sent  # a response object goes as its JSON text
    # One warning per part this format has no form for: the video and the uploaded file.
    assert len(result.warnings) == 3 and "googleSearch" in result.warnings[-1]
    assert [t.get("name", t.get("function", {}).get("name")) for t in result.tools or []] == [
        "weather"
    ]


def test_a_pending_call_is_valid_and_an_unanswered_one_is_not() -> None:
    pending = context(CONVERSATION[:2], "gemini")
    assert validate_gemini(pending.messages) == []
    broken = [*pending.messages, {"role": "user", "parts": [{"text": "never mind"}]}]
    assert validate_gemini(broken) and any("not answered" in p for p in validate_gemini(broken))


def test_a_history_that_starts_with_the_model_gets_a_user_turn_first() -> None:
    result = context(CONVERSATION[1:3], "gemini")
    assert result.messages[0]["role"] == "user"
    assert_official_gemini(result.messages)


@pytest.mark.parametrize(
    ("content", "error", "path"),
    [
        (
            {
                "role": "user",
                "parts": [{"text": "a", "inlineData": {"mimeType": "a/b", "data": "AA=="}}],
            },
            InvalidItem,
            "messages[0].parts[0]",
        ),
        ({"role": "assistant", "parts": [{"text": "a"}]}, InvalidItem, "messages[0].role"),
        ({"role": "user", "parts": []}, InvalidItem, "messages[0].parts"),
        (
            {"role": "user", "parts": [{"functionResponse": {"name": "x", "response": {}}}]},
            UnmatchedCallOutput,
            "messages[0].parts[0].functionResponse",
        ),
        (
            {"role": "user", "parts": [{"functionCall": {"name": "x", "args": {}}}]},
            InvalidItem,
            "messages[0].parts[0].functionCall",
        ),
        (
            {"role": "model", "parts": [{"functionCall": {"name": "x", "args": []}}]},
            InvalidItem,
            "messages[0].parts[0].functionCall.args",
        ),
        (
            {"role": "user", "parts": [{"inlineData": {"mimeType": "image/png"}}]},
            InvalidItem,
            "messages[0].parts[0].inlineData.data",
        ),
    ],
)
def test_bad_contents_name_their_path(content: dict[str, Any], error: type, path: str) -> None:
    with pytest.raises(error) as raised:
        parse_messages([content])
    assert raised.value.details["path"] == path  # type: ignore[attr-defined]


def test_stateless_ids_are_the_same_for_the_same_post() -> None:
    first = context(CONVERSATION, "openai")
    again = context(copy.deepcopy(CONVERSATION), "openai")
    assert first.messages == again.messages  # the prompt cache sees the same prefix


# Random Gemini conversations: text, thoughts, media, calls with and without ids, answered by
# name or id, responses as {"output": …} or any object, code execution.
NAMES = st.sampled_from(["search", "read_file", "run"])
# Blank text is left out in every format (the providers refuse it): not generated here.
TEXT = st.text(st.characters(codec="utf-8"), min_size=1, max_size=30).filter(str.strip)
SIGNATURES = st.one_of(st.none(), st.binary(min_size=1, max_size=12).map(b64))


@st.composite
def model_turn(draw: Any, turn: int) -> tuple[dict[str, Any], list[tuple[str, str | None]]]:
    parts: list[dict[str, Any]] = []
    if draw(st.booleans()):
        parts.append({"text": draw(TEXT), "thought": True})
    if draw(st.booleans()):
        parts.append({"executableCode": {"language": "PYTHON", "code": draw(TEXT)}})
    calls: list[tuple[str, str | None]] = []
    for n in range(draw(st.integers(0, 3))):
        name, call_id = draw(NAMES), draw(st.sampled_from([None, f"call-{turn}-{n}"]))
        call: dict[str, Any] = {"name": name, "args": {"q": draw(TEXT)}}
        if call_id:
            call["id"] = call_id
        parts.append({"functionCall": call})
        calls.append((name, call_id))
    if draw(st.booleans()) or not parts:
        parts.append({"text": draw(TEXT)})
    signature = draw(SIGNATURES)
    if signature:
        parts[0 if "thought" not in parts[0] else -1]["thoughtSignature"] = signature
    return {"role": "model", "parts": parts}, calls


@st.composite
def gemini_conversations(draw: Any) -> list[dict[str, Any]]:
    contents: list[dict[str, Any]] = []
    calls: list[tuple[str, str | None]] = []
    for turn in range(draw(st.integers(1, 6))):
        parts: list[dict[str, Any]] = []
        for name, call_id in reversed(calls) if draw(st.booleans()) else calls:
            response = draw(
                st.one_of(
                    TEXT.map(lambda t: {"output": t}),
                    st.dictionaries(st.sampled_from(["a", "b"]), st.integers(), min_size=1),
                )
            )
            answer = {"name": name, "response": response} | ({"id": call_id} if call_id else {})
            parts.append({"functionResponse": answer})
        if not calls or draw(st.booleans()):
            parts.append({"text": draw(TEXT)})
        if draw(st.booleans()):
            parts.append({"inlineData": {"mimeType": "image/png", "data": png(4, 4)}})
        contents.append({"role": "user", "parts": parts})
        model, calls = draw(model_turn(turn))
        contents.append(model)
    return contents


@settings(max_examples=80, deadline=None)
@given(gemini_conversations())
def test_random_gemini_conversations_round_trip_and_validate(contents: list[Any]) -> None:
    back = context(copy.deepcopy(contents), "gemini").messages
    assert_official_gemini(back)
    # Responses come back in the order posted; an id-less response answers the first open
    # call of its name, so the pairs (name, response) are what was posted.
    assert back == contents or _same_pairs(back, contents)
    for fmt in ("anthropic", "openai", "openai_responses"):
        OFFICIAL[fmt](context(copy.deepcopy(contents), fmt).messages)


def _same_pairs(back: list[dict[str, Any]], posted: list[dict[str, Any]]) -> bool:
    """Equal but for the ids that id-less responses gain from the calls that had one."""

    def strip(contents: list[dict[str, Any]]) -> list[Any]:
        out = copy.deepcopy(contents)
        for content in out:
            for part in content["parts"]:
                part.get("functionResponse", {}).pop("id", None)
        return out

    return strip(back) == strip(posted)


@settings(max_examples=60, deadline=None)
@given(st.data())
def test_mixed_provider_histories_render_as_valid_gemini(data: st.DataObject) -> None:
    """Anthropic, Chat and Responses histories (thinking, orphans, images, pending calls)
    as Gemini contents the official types and the API's rules accept."""
    counter = FakeCounter()
    history = data.draw(histories(counter))
    request = AssemblyInput(
        messages=tuple(history),
        context_window=200_000,
        settings=data.draw(settings_strategy),
        max_tokens=data.draw(st.one_of(st.none(), st.integers(min_value=300, max_value=20_000))),
        format="gemini",
    )
    try:
        result = assemble(request, counter)
    except Exception as error:  # a budget below the fixed costs: not this test's subject
        assert type(error).__name__ == "BudgetTooSmall"
        return
    assert validate_gemini(result.messages) == []
    assert isinstance(result.system, str | None)
    assert_official_gemini(result.messages, result.system)
    assert '"thinking"' not in json.dumps(result.messages)


def test_render_keeps_one_content_per_stored_message() -> None:
    messages = parse_messages(CONVERSATION)
    rendered = render(
        messages, "gemini", system_prompt=None, summary=None, placement="system", tools=None
    )
    assert rendered.sources == [m.id for m in messages]
