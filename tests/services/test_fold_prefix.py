"""Folds on the cached prefix (SPEC §13, app/services/fold_prefix.py): a fold started beside
a served context repeats that context byte for byte, then asks for the summary as one more
user turn; where the span was never served, the fold is a fresh prompt that says why. Each
summary version keeps the call's usage."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from tests.support.apps import MakeClient
from tests.support.factories import append, create_session, turns
from tests.support.fake_anthropic import FakeAnthropic, Recorded
from tests.support.summary_history import landed

BUDGET = 3000
SYSTEM = "You are a careful coding agent."
TOOLS = [{"name": "bash", "description": "Run a command.", "input_schema": {"type": "object"}}]


def billed(request: Recorded, text: str) -> dict[str, int]:
    """A fold on the prefix reads it from the cache; a fresh prompt pays for all of it."""
    size = len(str(request.body)) // 4
    if len(request.body["messages"]) > 1:
        return {"input_tokens": 40, "cache_read_input_tokens": size, "output_tokens": 30}
    return {"input_tokens": size, "output_tokens": 30}


@pytest.fixture
def fake() -> Iterator[FakeAnthropic]:
    server = FakeAnthropic(reply=lambda r: "Task progress: folded.", usage=billed).start()
    yield server
    server.stop()


async def llm_client(make_client: MakeClient, fake: FakeAnthropic, **settings: Any) -> Any:
    client = await make_client(
        anthropic_api_key="sk-ant-test-0000000000000000000000",
        anthropic_base_url=fake.base_url,
        fold_ahead=None,
        fold_hard_wait_s=None,
        **settings,
    )
    await create_session(client, id="s", system_prompt=SYSTEM, tools=TOOLS)
    return client


async def read(client: httpx.AsyncClient, **params: Any) -> dict[str, Any]:
    params = {"max_tokens": BUDGET, "format": "anthropic", **params}
    response = await client.get("/sessions/s/context", params=params)
    assert response.status_code == 200, response.text
    body: dict[str, Any] = response.json()
    return body


async def serve_until_fold(
    client: httpx.AsyncClient, fake: FakeAnthropic, **params: Any
) -> dict[str, Any]:
    """Append a turn and read, as a client does each turn, until a fold request reaches the
    provider; the context served by the read that started it."""
    for number in range(60):
        await append(client, "s", *turns(1, start=number, words=40))
        served = await read(client, **params)
        for _ in range(20):  # the fold starts beside the read
            if fake.requests:
                return served
            await asyncio.sleep(0.01)
    raise AssertionError("no fold started")


async def test_a_fold_repeats_the_served_context_and_records_cache_reads(
    make_client: MakeClient, fake: FakeAnthropic
) -> None:
    client = await llm_client(make_client, fake)
    served = await serve_until_fold(client, fake)
    (request,) = fake.requests
    body = request.body
    # The prefix as served, byte for byte: system blocks with their markers, tools, messages.
    assert body["model"] == served["model"]
    assert body["system"] == served["system"]
    assert body["tools"] == served["tools"]
    assert body["messages"][:-1] == served["messages"]
    instruction = body["messages"][-1]
    assert instruction["role"] == "user"
    assert "Cover everything up to and including the message that begins" in instruction["content"]
    version = await landed(client)
    assert version["method"] == "llm"
    usage = version["usage"]
    assert usage["prompt"] == "cached_prefix" and usage["prompt_note"] is None
    assert usage["cache_read_tokens"] == len(str(body)) // 4
    assert (usage["input_tokens"], usage["output_tokens"]) == (40, 30)
    assert version["tokens_in"] == 40 + usage["cache_read_tokens"]


async def test_the_span_folded_ends_where_the_instruction_says(
    make_client: MakeClient, fake: FakeAnthropic
) -> None:
    client = await llm_client(make_client, fake)
    served = await serve_until_fold(client, fake)
    instruction = fake.requests[0].body["messages"][-1]["content"]
    version = await landed(client)
    through = version["through_seq"]
    messages = (await client.get("/sessions/s/messages", params={"limit": 200})).json()
    last = next(m for m in messages["messages"] if m["seq"] == through)
    assert last["content"][:60] in instruction
    # The messages after it stay: the instruction counts them as they are sent.
    after = [m for m in messages["messages"] if m["seq"] > through]
    assert f"The {len(after)} messages after it stay" in instruction
    assert served["messages"][-1]["content"][0]["text"] == after[-1]["content"]


async def test_a_span_never_served_before_folds_on_a_fresh_prompt(
    make_client: MakeClient, fake: FakeAnthropic
) -> None:
    """A transcript posted whole and read once: nothing of it is in the provider's cache."""
    client = await llm_client(make_client, fake)
    await append(client, "s", *turns(40, words=40))
    await read(client)
    for _ in range(250):
        if fake.requests:
            break
        await asyncio.sleep(0.02)
    (request,) = fake.requests
    assert len(request.body["messages"]) == 1 and "<transcript>" in request.prompt
    usage = (await landed(client))["usage"]
    assert usage["prompt"] == "fresh"
    assert usage["prompt_note"].startswith("the span was not in the context served before")


@pytest.mark.parametrize(
    ("params", "note"),
    [
        ({"format": "raw"}, "the context is served as raw, not a provider's format"),
        (
            {"format": "openai"},
            "the anthropic summarizer does not fold on a context served as openai",
        ),
    ],
)
async def test_a_context_the_summarizer_cannot_repeat_folds_fresh(
    make_client: MakeClient, fake: FakeAnthropic, params: dict[str, str], note: str
) -> None:
    client = await llm_client(make_client, fake)
    await serve_until_fold(client, fake, **params)
    usage = (await landed(client))["usage"]
    assert (usage["prompt"], usage["prompt_note"]) == ("fresh", note)


async def test_the_setting_off_folds_fresh_without_a_note(
    make_client: MakeClient, fake: FakeAnthropic
) -> None:
    client = await llm_client(make_client, fake, summarizer_cached_prefix=False)
    await serve_until_fold(client, fake)
    usage = (await landed(client))["usage"]
    assert (usage["prompt"], usage["prompt_note"]) == ("fresh", None)
    assert usage["cache_read_tokens"] == 0


async def test_hybrid_asks_its_narrative_on_the_prefix_too(
    make_client: MakeClient, fake: FakeAnthropic
) -> None:
    client = await llm_client(make_client, fake, strategy="hybrid")
    served = await serve_until_fold(client, fake)
    (request,) = fake.requests
    assert request.body["messages"][:-1] == served["messages"]
    version = await landed(client)
    assert version["method"] == "hybrid" and version["usage"]["prompt"] == "cached_prefix"
    assert version["text"].endswith("Narrative:\nTask progress: folded.")
