"""DELETE /sessions/{id}/messages/last: the owner removes the newest message (the Agents SDK
`Session.pop_item`). Summarization never deletes; this is the one explicit per-message delete."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import httpx
from fastapi import FastAPI
from sqlalchemy import update

from app.models import Session
from app.models.base import utcnow
from tests.support.factories import (
    append,
    assert_error,
    assistant,
    context,
    create_session,
    stored,
    user,
)
from tests.support.recording_summarizer import RecordingSummarizer
from tests.support.responses_items import REASONING, call, output, said, typed


async def pop(client: httpx.AsyncClient, session_id: str) -> httpx.Response:
    return await client.delete(f"/sessions/{session_id}/messages/last")


async def popped(client: httpx.AsyncClient, session_id: str) -> dict[str, Any]:
    response = await pop(client, session_id)
    assert response.status_code == 200, response.text
    body: dict[str, Any] = response.json()
    return body


async def session(client: httpx.AsyncClient, session_id: str) -> dict[str, Any]:
    body: dict[str, Any] = (await client.get(f"/sessions/{session_id}")).json()
    return body


class TestRemove:
    async def test_returns_the_stored_message_and_its_items(
        self, client: httpx.AsyncClient
    ) -> None:
        await create_session(client, id="s")
        await append(client, "s", said("user", "go"), REASONING, call("c1"), output("c1", "ok"))
        rows = await stored(client, "s")
        last = await popped(client, "s")
        assert last == rows[-1] | {"items": last["items"]}
        assert last["items"] == [output("c1", "ok")]
        turn = await popped(client, "s")
        assert turn["items"] == [REASONING, call("c1")]
        assert [r["seq"] for r in await stored(client, "s")] == [1]

    async def test_items_keep_the_ids_they_were_posted_with(
        self, client: httpx.AsyncClient
    ) -> None:
        # As the context does: the Agents SDK pairs items by id, so a popped item keeps it.
        await create_session(client, id="s")
        with_id = {**call("c1"), "id": "fc_1", "status": "completed"}
        await append(client, "s", said("user", "go"), with_id)
        assert (await popped(client, "s"))["items"] == [with_id]

    async def test_counters_follow_and_seqs_are_not_reused(self, client: httpx.AsyncClient) -> None:
        await create_session(client, id="s")
        appended = await append(client, "s", user("one"), assistant("two"), user("three"))
        before = await session(client, "s")
        await popped(client, "s")
        after = await session(client, "s")
        assert after["message_count"] == 2
        assert after["total_tokens"] == before["total_tokens"] - appended[-1]["token_count"]
        assert after["updated_at"] > before["updated_at"]
        again = await append(client, "s", user("three again"))
        assert again[0]["seq"] == 4
        assert (await session(client, "s"))["message_count"] == 3
        assert [r["seq"] for r in await stored(client, "s")] == [1, 2, 4]

    async def test_the_served_context_changes_at_once(self, client: httpx.AsyncClient) -> None:
        await create_session(client, id="s")
        await append(client, "s", user("task"), assistant("reply"), user("oops, wrong"))
        for fmt in ("anthropic", "openai_responses"):
            await context(client, "s", format=fmt)
            await context(client, "s", format=fmt)  # a repeat: served from the cache
        first = await context(client, "s", format="openai_responses")
        assert first["messages"][-1] == typed("oops, wrong")
        await popped(client, "s")
        again = await context(client, "s", format="openai_responses")
        assert again["messages"] == first["messages"][:-1]
        assert again["messages_total"] == 2
        anthropic = await context(client, "s", format="anthropic")
        assert anthropic["messages"][-1]["role"] == "assistant"

    async def test_a_client_id_may_be_posted_again_after_its_message_is_removed(
        self, client: httpx.AsyncClient
    ) -> None:
        await create_session(client, id="s")
        await append(client, "s", user("one", client_id="u1"))
        await popped(client, "s")
        again = await append(client, "s", user("one", client_id="u1"))
        assert not again[0]["duplicate"] and again[0]["seq"] == 2

    async def test_clear_after_a_removal_names_the_newest_stored_message(
        self, client: httpx.AsyncClient
    ) -> None:
        await create_session(client, id="s")
        appended = await append(client, "s", user("one"), assistant("two"))
        await popped(client, "s")
        cleared = (await client.post("/sessions/s/clear")).json()
        assert cleared["summary"]["through_id"] == appended[0]["id"]
        assert cleared["message_count"] == 1
        await append(client, "s", user("three"))
        assert (await context(client, "s"))["messages_total"] == 1

    async def test_sorting_by_message_count_counts_removals(
        self, client: httpx.AsyncClient
    ) -> None:
        await create_session(client, id="a")
        await create_session(client, id="b")
        await append(client, "a", user("1"), user("2"), user("3"))
        await append(client, "b", user("1"), user("2"))
        await popped(client, "a")
        await popped(client, "a")
        page = (await client.get("/sessions", params={"sort": "message_count"})).json()
        assert [(s["id"], s["message_count"]) for s in page["sessions"]] == [("a", 1), ("b", 2)]


class TestRefused:
    async def test_no_messages(self, client: httpx.AsyncClient) -> None:
        await create_session(client, id="s")
        assert_error(await pop(client, "s"), 404, "no_messages")
        await append(client, "s", user("one"))
        await popped(client, "s")
        assert_error(await pop(client, "s"), 404, "no_messages")
        assert_error(await pop(client, "nope"), 404, "session_not_found")

    async def test_a_message_folded_into_the_summary_stays(
        self, client: httpx.AsyncClient, recorder: RecordingSummarizer
    ) -> None:
        await create_session(
            client, id="s", settings={"keep_recent": 0, "pin_first_message": False}
        )
        await append(client, "s", user("one " * 30), assistant("two " * 30), user("three"))
        folded = (await client.post("/sessions/s/summarize")).json()
        assert folded["folded"] and folded["summary"]["through_seq"] == 2, folded
        await popped(client, "s")  # the last unit is never folded
        error = assert_error(await pop(client, "s"), 409, "message_summarized")
        assert error["details"]["seq"] == 2
        assert len(await stored(client, "s")) == 2

    async def test_a_cleared_message_stays(self, client: httpx.AsyncClient) -> None:
        await create_session(client, id="s")
        await append(client, "s", user("one"))
        assert (await client.post("/sessions/s/clear")).status_code == 200
        assert_error(await pop(client, "s"), 409, "message_cleared")
        assert len(await stored(client, "s")) == 1

    async def test_not_while_a_fold_runs(self, client: httpx.AsyncClient, app: FastAPI) -> None:
        await create_session(client, id="s")
        await append(client, "s", user("one"), assistant("two"))
        lease = {"fold_lease_owner": "other-worker", "fold_lease_until": utcnow()}
        async with app.state.sessionmaker() as db, db.begin():
            until = utcnow() + timedelta(minutes=1)
            await db.execute(update(Session).values(**lease | {"fold_lease_until": until}))
        assert_error(await pop(client, "s"), 409, "fold_in_progress")
        async with app.state.sessionmaker() as db, db.begin():
            lapsed = utcnow() - timedelta(seconds=1)
            await db.execute(update(Session).values(**lease | {"fold_lease_until": lapsed}))
        await popped(client, "s")
