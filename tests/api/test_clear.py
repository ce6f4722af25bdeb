"""POST /sessions/{id}/clear: a fold to an empty summary; messages stay stored."""

from __future__ import annotations

from typing import Any

import httpx

from tests.support.factories import (
    append,
    assert_error,
    context,
    create_session,
    stored,
    turns,
    user,
)
from tests.support.recording_summarizer import RecordingSummarizer


async def clear(client: httpx.AsyncClient, session_id: str) -> dict[str, Any]:
    response = await client.post(f"/sessions/{session_id}/clear")
    assert response.status_code == 200, response.text
    body: dict[str, Any] = response.json()
    return body


class TestClear:
    async def test_clear_moves_through_to_the_newest_message(
        self, client: httpx.AsyncClient, recorder: RecordingSummarizer
    ) -> None:
        await create_session(client, id="s")
        appended = await append(client, "s", *turns(3, words=5))
        session = await clear(client, "s")
        assert session["summary"] == {
            "text": None,
            "version": 1,
            "through_id": appended[-1]["id"],
            "through_seq": 6,
            "message_count": 0,
            "tokens": 0,
            "method": "clear",
        }
        assert session["message_count"] == 6 and session["total_tokens"] == 0
        assert recorder.calls == []

    async def test_next_context_holds_only_later_messages_and_a_new_pinned_one(
        self, client: httpx.AsyncClient, recorder: RecordingSummarizer
    ) -> None:
        await create_session(client, id="s", system_prompt="S")
        await append(client, "s", *turns(3, words=5))
        before = await stored(client, "s")
        await clear(client, "s")
        empty = await context(client, "s")
        assert empty["messages"] == [] and empty["messages_total"] == 0
        assert empty["system"] == [
            {"type": "text", "text": "S", "cache_control": {"type": "ephemeral"}}
        ]
        await append(client, "s", user("new task"), *turns(2, words=5))
        body = await context(client, "s", explain=True)
        assert body["messages"][0]["content"] == "new task"
        assert body["messages_total"] == 5 and [e["seq"] for e in body["explain"]] == [
            7,
            8,
            9,
            10,
            11,
        ]
        assert (await stored(client, "s"))[:6] == before

    async def test_clear_after_a_fold_resets_the_summary(
        self, client: httpx.AsyncClient, recorder: RecordingSummarizer
    ) -> None:
        await create_session(client, id="s")
        await append(client, "s", *turns(20))
        folded = (await context(client, "s", max_tokens=1500))["summary"]
        session = await clear(client, "s")
        assert session["summary"]["version"] == folded["version"] + 1
        assert session["summary"]["through_seq"] == 40
        body = await context(client, "s", max_tokens=1500)
        assert body["summary"]["text"] is None and body["summary"]["method"] == "clear"
        assert "Summary of earlier conversation" not in (body["system"] or "")

    async def test_clear_on_an_empty_session(self, client: httpx.AsyncClient) -> None:
        await create_session(client, id="s")
        session = await clear(client, "s")
        assert session["summary"]["through_id"] is None and session["summary"]["version"] == 1

    async def test_unknown_session(self, client: httpx.AsyncClient) -> None:
        assert_error(await client.post("/sessions/nope/clear"), 404, "session_not_found")
