"""POST /sessions/{id}/summarize (manual fold) and GET /sessions/{id}/summaries (history)."""

from __future__ import annotations

import httpx

from app.summarizers.rule import PINNED_TASK
from tests.support.factories import append, assert_error, create_session, turns
from tests.support.recording_summarizer import RecordingSummarizer


class TestSummarizeNow:
    async def test_folds_everything_foldable_with_focus(
        self, client: httpx.AsyncClient, recorder: RecordingSummarizer
    ) -> None:
        await create_session(client, id="s", settings={"keep_recent": 2})
        await append(client, "s", *turns(5, words=5))
        response = await client.post("/sessions/s/summarize", json={"focus": "keep file paths"})
        assert response.status_code == 200, response.text
        body = response.json()
        assert body["folded"] is True and body["method"] == "rule"
        request = recorder.calls[0].request
        assert request.focus == "keep file paths"
        assert [m.seq for m in request.messages] == list(range(2, 9))  # not pinned, not last 2
        assert body["messages_folded"] == 7
        assert body["summary"]["version"] == 1 and body["summary"]["through_seq"] == 8
        assert body["stats"]["trigger"] == "manual" and body["stats"]["messages_folded"] == 7

    async def test_nothing_to_fold_answers_folded_false_and_keeps_the_summary(
        self, client: httpx.AsyncClient, recorder: RecordingSummarizer
    ) -> None:
        await create_session(client, id="s", settings={"keep_recent": 2})
        await append(client, "s", *turns(5, words=5))
        first = (await client.post("/sessions/s/summarize")).json()
        again = await client.post("/sessions/s/summarize")
        assert again.status_code == 200
        body = again.json()
        assert body["folded"] is False and body["messages_folded"] == 0
        assert body["summary"] == first["summary"] and len(recorder.calls) == 1

    async def test_strategy_and_cap_reach_the_summarizer(
        self, client: httpx.AsyncClient, recorder: RecordingSummarizer
    ) -> None:
        await create_session(client, id="s", settings={"keep_recent": 2})
        await append(client, "s", *turns(5, words=5))
        body = {"strategy": "rule", "max_summary_tokens": 60}
        assert (await client.post("/sessions/s/summarize", json=body)).status_code == 200
        call = recorder.calls[0]
        assert call.strategy == "rule" and call.request.max_summary_tokens == 60

    async def test_the_summarizer_is_told_when_the_first_message_is_pinned(
        self, client: httpx.AsyncClient, recorder: RecordingSummarizer
    ) -> None:
        await create_session(client, id="s", settings={"keep_recent": 2})
        await create_session(
            client, id="u", settings={"keep_recent": 2, "pin_first_message": False}
        )
        for session in ("s", "u"):
            await append(client, session, *turns(5, words=5))
            assert (await client.post(f"/sessions/{session}/summarize")).status_code == 200
        pinned, unpinned = (call.request for call in recorder.calls)
        assert pinned.task_pinned and pinned.messages[0].seq == 2
        assert not unpinned.task_pinned and unpinned.messages[0].seq == 1

    async def test_rule_summary_of_a_pinned_session_refers_to_the_first_message(
        self, client: httpx.AsyncClient
    ) -> None:
        await create_session(client, id="s", settings={"keep_recent": 2})
        first = {"role": "user", "content": "Add a CSV export of the invoices."}
        later = {"role": "user", "content": "Don't touch app/tax.py, it is shared with billing."}
        await append(client, "s", first, *turns(2, words=5), later, *turns(2, words=5))
        body = (await client.post("/sessions/s/summarize")).json()
        assert body["summary"]["text"].startswith(f"Task: {PINNED_TASK}\n")
        assert "- Don't touch app/tax.py" in body["summary"]["text"]

    async def test_unknown_session_and_bad_body(self, client: httpx.AsyncClient) -> None:
        assert_error(await client.post("/sessions/nope/summarize"), 404, "session_not_found")
        await create_session(client, id="s")
        response = await client.post("/sessions/s/summarize", json={"strategy": "magic"})
        assert_error(response, 422, "validation_error")

    async def test_real_rule_summarizer_without_a_fake(self, client: httpx.AsyncClient) -> None:
        await create_session(client, id="s", settings={"keep_recent": 2})
        await append(client, "s", *turns(5, words=5))
        body = (await client.post("/sessions/s/summarize")).json()
        assert body["folded"] is True and body["method"] == "rule"
        assert body["summary"]["text"] and body["summary"]["tokens"] > 0


class TestHistory:
    async def test_newest_first_with_cursor_pages(
        self, client: httpx.AsyncClient, recorder: RecordingSummarizer
    ) -> None:
        await create_session(client, id="s", settings={"keep_recent": 2})
        for round_number in range(3):
            await append(client, "s", *turns(3, start=round_number * 3, words=5))
            assert (await client.post("/sessions/s/summarize")).json()["folded"] is True
        await client.post("/sessions/s/clear")
        page = (await client.get("/sessions/s/summaries", params={"limit": 3})).json()
        assert [row["version"] for row in page["summaries"]] == [4, 3, 2]
        assert page["summaries"][0]["method"] == "clear"
        rest = await client.get(
            "/sessions/s/summaries", params={"limit": 3, "cursor": page["next_cursor"]}
        )
        assert [row["version"] for row in rest.json()["summaries"]] == [1]
        assert rest.json()["next_cursor"] is None
        row = page["summaries"][1]
        assert set(row) == {
            "text", "version", "through_id", "through_seq", "message_count", "tokens",
            "method", "model", "tokens_in", "tokens_out", "usage", "stats", "created_at",
        }  # fmt: skip
        seqs = [r["through_seq"] for r in reversed(page["summaries"] + rest.json()["summaries"])]
        assert seqs == sorted(seqs)  # through only moves forward

    async def test_bad_cursor_and_unknown_session(self, client: httpx.AsyncClient) -> None:
        await create_session(client, id="s")
        response = await client.get("/sessions/s/summaries", params={"cursor": "garbage"})
        assert_error(response, 422, "invalid_cursor")
        assert_error(await client.get("/sessions/nope/summaries"), 404, "session_not_found")
