"""A session's `summarizer` setting (SPEC §13): a provider and model the server allows, refused
with 422 `summarizer_not_allowed` otherwise; its folds go to that provider, on the cached
prefix when the context is served in that provider's format."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from tests.support.apps import MakeClient
from tests.support.factories import append, assert_error, create_session, turns
from tests.support.fake_openai import FakeOpenAI
from tests.support.summary_history import landed

CHOICE = "openai:gpt-5-mini"
BUDGET = 3000


@pytest.fixture
def openai_fake() -> Iterator[FakeOpenAI]:
    server = FakeOpenAI(reply=lambda r: "Task progress: folded by OpenAI.", cached_tokens=900)
    server.start()
    yield server
    server.stop()


async def openai_client(make_client: MakeClient, fake: FakeOpenAI, **settings: Any) -> Any:
    return await make_client(
        openai_api_key="sk-test-0000000000000000",
        openai_base_url=fake.openai_base_url,
        fold_ahead=None,
        fold_hard_wait_s=None,
        **settings,
    )


async def test_a_choice_the_server_does_not_allow_is_refused_everywhere(
    make_client: MakeClient, openai_fake: FakeOpenAI
) -> None:
    client = await openai_client(make_client, openai_fake)
    refused = await client.post("/sessions", json={"id": "s", "settings": {"summarizer": CHOICE}})
    assert_error(refused, 422, "summarizer_not_allowed")
    assert (await client.get("/sessions/s")).status_code == 404  # nothing stored
    await create_session(client, id="s")
    patched = await client.patch("/sessions/s", json={"settings": {"summarizer": CHOICE}})
    assert_error(patched, 422, "summarizer_not_allowed")
    read = await client.get("/sessions/s/context", params={"summarizer": CHOICE})
    assert_error(read, 422, "summarizer_not_allowed")
    malformed = await client.patch("/sessions/s", json={"settings": {"summarizer": "mistral"}})
    assert malformed.status_code == 422


async def test_an_allowed_choice_folds_with_that_provider_on_its_served_prefix(
    make_client: MakeClient, openai_fake: FakeOpenAI
) -> None:
    client = await openai_client(make_client, openai_fake, summarizer_models=["openai:*"])
    settings = {"summarizer": CHOICE, "strategy": "llm"}
    await create_session(
        client, id="s", model="gpt-4o", settings=settings, system_prompt="Be exact."
    )
    served = await _serve_until_fold(client, openai_fake)
    (request,) = openai_fake.requests
    assert request.path == "/v1/responses"
    assert request.body["model"] == "gpt-4o"  # the conversation's model: its cache
    assert request.body["instructions"] == served["system"]
    assert request.body["input"][:-1] == served["messages"]
    assert request.body["input"][-1]["role"] == "user"
    version = await landed(client)
    assert version["method"] == "llm" and version["model"] == "gpt-4o"
    usage = version["usage"]
    assert usage["prompt"] == "cached_prefix" and usage["cache_read_tokens"] == 900
    assert usage["cache_write_tokens"] == 0


async def _serve_until_fold(client: httpx.AsyncClient, fake: FakeOpenAI) -> dict[str, Any]:
    for number in range(60):
        await append(client, "s", *turns(1, start=number, words=40))
        params: dict[str, Any] = {"max_tokens": BUDGET, "format": "openai_responses"}
        response = await client.get("/sessions/s/context", params=params)
        assert response.status_code == 200, response.text
        for _ in range(20):
            if fake.requests:
                return dict(response.json())
            await asyncio.sleep(0.01)
    raise AssertionError("no fold started")
