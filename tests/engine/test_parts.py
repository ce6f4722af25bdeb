"""Every part valid where it is sent (app/engine/parts.py): faithful conversions where they
exist, labelled placeholders with a warning where not, never a part the target API refuses,
never one silently lost; every output validates against the provider's own types."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from app.core.context_settings import ContextSettings
from app.core.settings import Settings
from app.engine.assemble import AssemblyInput, AssemblyResult, assemble
from app.engine.items import parse_messages
from app.tokens.counter import TiktokenCounter, counter_for
from app.tokens.registry import load_registry
from tests.support.media import b64, pdf_bytes, png, wav_bytes
from tests.support.official_types import (
    assert_official_anthropic,
    assert_official_chat,
    assert_official_gemini,
    assert_official_items,
)

COUNTER: TiktokenCounter = counter_for(load_registry(Settings(_env_file=None)).get("gpt-4o"))
PDF = b64(pdf_bytes(["Invoice 42: total 1,250 EUR"]))
AUDIO = {"type": "input_audio", "input_audio": {"data": b64(wav_bytes(1.0)), "format": "wav"}}
CHAT_PDF = {
    "type": "file",
    "file": {"file_data": f"data:application/pdf;base64,{PDF}", "filename": "invoice.pdf"},
}
PDF_DOCUMENT = {
    "type": "document",
    "title": "invoice.pdf",
    "source": {"type": "base64", "media_type": "application/pdf", "data": PDF},
}
TEXT_DOCUMENT = {
    "type": "document",
    "title": "spec.md",
    "source": {"type": "text", "media_type": "text/plain", "data": "Rule 1: be kind."},
}
URL_DOCUMENT = {"type": "document", "source": {"type": "url", "url": "https://x.test/a.pdf"}}
IMAGE = {
    "type": "image",
    "source": {"type": "base64", "media_type": "image/png", "data": png(8, 8)},
}
SEARCH = {
    "type": "server_tool_use",
    "id": "srvtoolu_1",
    "name": "web_search",
    "input": {"query": "lisbon flights march"},
}
RESULTS = {
    "type": "web_search_tool_result",
    "tool_use_id": "srvtoolu_1",
    "content": [
        {
            "type": "web_search_result",
            "title": "Cheap flights",
            "url": "https://f.test",
            "encrypted_content": "SECRET-ENCRYPTED",
            "page_age": "2 days",
        }
    ],
}
FORMATS = ("anthropic", "openai", "openai_responses", "gemini")
FILE_BY_ID = {"type": "file", "file": {"file_id": "file-abc"}}


def context(raw: list[dict[str, Any]], fmt: str) -> AssemblyResult:
    messages = [m.counted(COUNTER.count_message(m)) for m in parse_messages(raw)]
    request = AssemblyInput(
        messages=messages,
        context_window=128_000,
        format=fmt,  # type: ignore[arg-type]
        settings=ContextSettings(cache_breakpoints=False),
    )
    return assemble(request, COUNTER)


OFFICIAL = {
    "anthropic": assert_official_anthropic,
    "openai": assert_official_chat,
    "openai_responses": assert_official_items,
    "gemini": assert_official_gemini,
}


def official(result: AssemblyResult, fmt: str) -> None:
    OFFICIAL[fmt](result.messages)


def sent_parts(result: AssemblyResult, fmt: str) -> list[dict[str, Any]]:
    last = result.messages[-1]
    return list(last["parts"] if fmt == "gemini" else last["content"])


def user(*blocks: dict[str, Any]) -> dict[str, Any]:
    return {"role": "user", "content": [{"type": "text", "text": "see attached"}, *blocks]}


@pytest.mark.parametrize(
    ("fmt", "block", "expected"),
    [
        (
            "anthropic",
            CHAT_PDF,
            {
                "type": "document",
                "title": "invoice.pdf",
                "source": {"type": "base64", "media_type": "application/pdf", "data": PDF},
            },
        ),
        (
            "openai",
            PDF_DOCUMENT,
            {
                "type": "file",
                "file": {
                    "file_data": f"data:application/pdf;base64,{PDF}",
                    "filename": "invoice.pdf",
                },
            },
        ),
        ("openai", TEXT_DOCUMENT, {"type": "text", "text": "spec.md\n\nRule 1: be kind."}),
        (
            "openai_responses",
            PDF_DOCUMENT,
            {
                "type": "input_file",
                "filename": "invoice.pdf",
                "file_data": f"data:application/pdf;base64,{PDF}",
            },
        ),
        (
            "openai_responses",
            CHAT_PDF,
            {
                "type": "input_file",
                "filename": "invoice.pdf",
                "file_data": f"data:application/pdf;base64,{PDF}",
            },
        ),
        (
            "openai_responses",
            URL_DOCUMENT,
            {"type": "input_file", "file_url": "https://x.test/a.pdf"},
        ),
        (
            "openai_responses",
            TEXT_DOCUMENT,
            {"type": "input_text", "text": "spec.md\n\nRule 1: be kind."},
        ),
        ("openai", AUDIO, AUDIO),
        ("gemini", PDF_DOCUMENT, {"inlineData": {"mimeType": "application/pdf", "data": PDF}}),
        ("gemini", CHAT_PDF, {"inlineData": {"mimeType": "application/pdf", "data": PDF}}),
        ("gemini", IMAGE, {"inlineData": {"mimeType": "image/png", "data": png(8, 8)}}),
        (
            "gemini",
            AUDIO,
            {"inlineData": {"mimeType": "audio/wav", "data": b64(wav_bytes(1.0))}},
        ),
        (
            "gemini",
            URL_DOCUMENT,
            {"fileData": {"mimeType": "application/pdf", "fileUri": "https://x.test/a.pdf"}},
        ),
        ("gemini", TEXT_DOCUMENT, {"text": "spec.md\n\nRule 1: be kind."}),
    ],
)
def test_faithful_conversions(fmt: str, block: dict[str, Any], expected: dict[str, Any]) -> None:
    result = context([user(block)], fmt)
    assert expected in sent_parts(result, fmt)
    assert result.warnings == ()
    official(result, fmt)


@pytest.mark.parametrize(
    ("fmt", "block"),
    [
        ("anthropic", AUDIO),
        ("openai_responses", AUDIO),
        ("openai", URL_DOCUMENT),
        ("gemini", FILE_BY_ID),
    ],
)
def test_what_cannot_go_is_a_placeholder_with_a_warning(fmt: str, block: dict[str, Any]) -> None:
    result = context([user(block)], fmt)
    sent = json.dumps(result.messages)
    assert '"input_audio"' not in sent and '"document"' not in sent and "file-abc" not in sent
    (warning,) = result.warnings
    assert f"format={fmt}" in warning and "placeholder" in warning
    official(result, fmt)


@pytest.mark.parametrize("fmt", ["openai", "openai_responses", "gemini"])
def test_server_tool_blocks_become_a_readable_note(fmt: str) -> None:
    raw: list[dict[str, Any]] = [
        {"role": "user", "content": "Find flights"},
        {"role": "assistant", "content": [SEARCH, RESULTS, {"type": "text", "text": "Found one."}]},
        {"role": "user", "content": "Book it"},
    ]
    result = context(raw, fmt)
    sent = json.dumps(result.messages, ensure_ascii=False)
    assert "SECRET-ENCRYPTED" not in sent and "encrypted_content" not in sent
    assert "lisbon flights march" in sent and "Cheap flights — https://f.test" in sent
    official(result, fmt)


def test_anthropic_keeps_server_tool_blocks_byte_for_byte() -> None:
    raw: list[dict[str, Any]] = [
        {"role": "user", "content": "Find"},
        {"role": "assistant", "content": [SEARCH, RESULTS]},
    ]
    result = context([*raw, {"role": "user", "content": "ok"}], "anthropic")
    assert result.messages[1]["content"] == [SEARCH, RESULTS]


POOL = [
    AUDIO,
    CHAT_PDF,
    PDF_DOCUMENT,
    TEXT_DOCUMENT,
    URL_DOCUMENT,
    IMAGE,
    {"type": "image_url", "image_url": {"url": f"data:image/png;base64,{png(4, 4)}"}},
]


@settings(max_examples=60, deadline=None)
@given(
    turns=st.lists(st.lists(st.sampled_from(POOL), min_size=1, max_size=3), min_size=1, max_size=5),
    fmt=st.sampled_from(FORMATS),
)
def test_random_mixed_parts_always_validate(turns: list[list[dict[str, Any]]], fmt: str) -> None:
    raw: list[dict[str, Any]] = []
    for n, blocks in enumerate(turns):
        raw += [user(*blocks), {"role": "assistant", "content": f"reply {n}"}]
    raw.append({"role": "user", "content": "next"})
    result = context(raw, fmt)
    official(result, fmt)
    sent = json.dumps(result.messages)
    placeholders = len(result.warnings)
    carried = {
        "anthropic": ('"type": "document"', '"type": "image"'),
        "openai": ('"type": "file"', '"type": "input_audio"', '"type": "image_url"'),
        "openai_responses": ('"type": "input_file"', '"type": "input_image"'),
        "gemini": ('"inlineData":', '"fileData":'),
    }[fmt]
    media = sum(len(blocks) for blocks in turns)
    as_text = sent.count("Rule 1: be kind.") if fmt != "anthropic" else 0  # text documents
    assert sum(sent.count(c) for c in carried) + as_text + placeholders == media
