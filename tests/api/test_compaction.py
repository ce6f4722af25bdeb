"""Provider compaction over HTTP: a Responses compaction item is stored verbatim and served as
its format says; a malformed one is a 422 naming its path, and nothing of the post is stored."""

from __future__ import annotations

import httpx

from tests.support.factories import append, assert_error, create_session, user

ITEM = {"type": "compaction", "encrypted_content": "gAAAAB-opaque", "id": "cmp_7"}


async def test_stored_verbatim_and_served_in_openai_responses(client: httpx.AsyncClient) -> None:
    await create_session(client, id="compact", model="gpt-4o")
    await append(
        client,
        "compact",
        user("Task: refactor the parser"),
        {"role": "assistant", "content": "Reading it."},
        user("Keep the API."),
        ITEM,
        user("Now the tests."),
    )
    stored = (await client.get("/sessions/compact/messages")).json()["messages"]
    assert stored[3]["role"] == "assistant" and stored[3]["content"] == [ITEM]
    body = (
        await client.get(
            "/sessions/compact/context", params={"format": "openai_responses", "explain": "true"}
        )
    ).json()
    assert body["messages"][:2] == [{"role": "user", "content": "Keep the API."}, ITEM]
    statuses = [e["status"] for e in body["explain"]]
    assert statuses == ["compacted", "compacted", "included", "included", "included"]
    other = (await client.get("/sessions/compact/context", params={"format": "openai"})).json()
    assert "gAAAAB" not in str(other["messages"]) and other["messages_included"] == 4


async def test_a_malformed_item_is_refused_and_nothing_stored(client: httpx.AsyncClient) -> None:
    await create_session(client, id="compact")
    response = await client.post(
        "/sessions/compact/messages",
        json={"messages": [user("first"), {"type": "compaction", "encrypted_content": ""}]},
    )
    error = assert_error(response, 422, "invalid_item")
    assert error["details"]["path"] == "messages[1].encrypted_content"
    assert (await client.get("/sessions/compact/messages")).json()["messages"] == []
