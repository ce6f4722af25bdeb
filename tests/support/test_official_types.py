"""assert_official_gemini: a request Gemini takes passes (every part kind, system instruction,
function and built-in tools); unknown keys, a part with two data fields, a role Gemini does
not have, a response to no call and a misspelled tool are refused, each named."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from tests.support.media import b64, png
from tests.support.official_types import assert_official_gemini

# Standard base64 with '+' and '/' (the SDK reads it back url-safe).
SIGNATURE = b64(b"\xfb\xff\xfe signature")
WEATHER = {
    "name": "get_weather",
    "description": "The weather in a city.",
    "parameters": {
        "type": "object",
        "properties": {"city": {"type": "string", "description": "The city."}},
        "required": ["city"],
    },
}
CONTENTS: list[dict[str, Any]] = [
    {
        "role": "user",
        "parts": [
            {"text": "What is in the picture, and the weather in Paris and Rome?"},
            {"inlineData": {"mimeType": "image/png", "data": png(8, 8)}},
            {"fileData": {"mimeType": "application/pdf", "fileUri": "gs://bucket/a.pdf"}},
        ],
    },
    {
        "role": "model",
        "parts": [
            {"text": "Looking up both.", "thought": True, "thoughtSignature": SIGNATURE},
            {
                "functionCall": {"name": "get_weather", "args": {"city": "Paris"}, "id": "c1"},
                "thoughtSignature": SIGNATURE,
            },
            {"functionCall": {"name": "get_weather", "args": {"city": "Rome"}}},
        ],
    },
    {
        "role": "user",
        "parts": [
            {"functionResponse": {"name": "get_weather", "response": {"t": 21}, "id": "c1"}},
            {"functionResponse": {"name": "get_weather", "response": {"output": "19 C"}}},
        ],
    },
    {
        "role": "model",
        "parts": [
            {"executableCode": {"language": "PYTHON", "code": "print(21 - 19)"}},
            {"codeExecutionResult": {"outcome": "OUTCOME_OK", "output": "2\n"}},
            {"text": "Paris is 2 degrees warmer."},
        ],
    },
]
TOOLS: list[dict[str, Any]] = [
    {"functionDeclarations": [WEATHER]},
    {"googleSearch": {}},
    {"codeExecution": {}},
]


def refusal(contents: list[dict[str, Any]], tools: list[dict[str, Any]] | None = None) -> str:
    with pytest.raises(AssertionError) as raised:
        assert_official_gemini(contents, system="Be brief.", tools=tools)
    return str(raised.value)


def test_a_request_gemini_takes_passes() -> None:
    assert_official_gemini(CONTENTS, system="Be brief.", tools=TOOLS)
    assert_official_gemini(CONTENTS[:1])


def test_an_unknown_part_key_is_refused() -> None:
    contents = copy.deepcopy(CONTENTS)
    contents[0]["parts"][0]["cache_control"] = {"type": "ephemeral"}
    assert "contents[0]" in (message := refusal(contents)) and "cache_control" in message


def test_a_snake_case_key_is_refused() -> None:
    contents = copy.deepcopy(CONTENTS)
    contents[0]["parts"][1] = {"inline_data": contents[0]["parts"][1]["inlineData"]}
    assert "contents[0].parts[1].inline_data: not kept" in refusal(contents)


def test_a_part_with_two_data_fields_is_refused() -> None:
    contents = copy.deepcopy(CONTENTS)
    contents[0]["parts"][0]["fileData"] = {"mimeType": "image/png", "fileUri": "gs://b/c.png"}
    assert "contents[0].parts[0]: 2 data fields ['text', 'fileData']" in refusal(contents)


def test_the_assistant_role_is_refused() -> None:
    contents = copy.deepcopy(CONTENTS)
    contents[3]["role"] = "assistant"
    assert "contents[3].role: 'assistant', not 'user' or 'model'" in refusal(contents)


def test_a_function_response_to_no_call_is_refused() -> None:
    by_name = copy.deepcopy(CONTENTS)
    by_name[2]["parts"][1]["functionResponse"]["name"] = "get_time"
    assert "contents[2].parts[1].functionResponse (name 'get_time'" in refusal(by_name)
    by_id = copy.deepcopy(CONTENTS)
    # With ids on both sides, a name match is not enough.
    by_id[1]["parts"][2]["functionCall"]["id"] = "c2"
    by_id[2]["parts"][1]["functionResponse"]["id"] = "c2"
    by_id[2]["parts"][0]["functionResponse"]["id"] = "c9"
    assert "contents[2].parts[0].functionResponse" in refusal(by_id)
    # A call answered twice, and an answer with no model content right before it.
    twice = copy.deepcopy(CONTENTS)
    twice[2]["parts"].append(copy.deepcopy(twice[2]["parts"][1]))
    assert "contents[2].parts[2].functionResponse" in refusal(twice)
    assert "contents[0].parts[0].functionResponse" in refusal([CONTENTS[2]])


def test_a_misspelled_tool_key_is_refused() -> None:
    misspelled = [{"functionDeclaration": [WEATHER]}]
    assert "tools[0]" in (message := refusal(CONTENTS, misspelled))
    assert "functionDeclaration" in message
    typo_in_schema = [{"functionDeclarations": [{**WEATHER, "parameter": WEATHER["parameters"]}]}]
    assert "tools[0]" in refusal(CONTENTS, typo_in_schema)


def test_an_unknown_enum_value_and_bad_base64_are_refused() -> None:
    contents = copy.deepcopy(CONTENTS)
    contents[3]["parts"][0]["executableCode"]["language"] = "PYHTON"
    contents[1]["parts"][0]["thoughtSignature"] = "not base64!"
    message = refusal(contents)
    assert "PYHTON is not a valid Language" in message
    assert "contents[1]" in message and "base64" in message
