"""GET …/context?preview=true: look only. No fold, and the served-context record (usage.cache,
POST …/usage calibration) stays what the last real request left."""

from __future__ import annotations

import httpx

from tests.support.factories import append, context, create_session, turns
from tests.support.recording_summarizer import RecordingSummarizer


async def version(client: httpx.AsyncClient, session_id: str) -> int:
    summary = (await client.get(f"/sessions/{session_id}")).json()["summary"]
    return 0 if summary is None else int(summary["version"])


async def test_a_preview_neither_folds_nor_disturbs_the_next_real_request(
    client: httpx.AsyncClient, recorder: RecordingSummarizer
) -> None:
    await create_session(client, id="s", system_prompt="Be brief.")
    await append(client, "s", *turns(12))
    real = await context(client, "s", max_tokens=5000)
    assert real["usage"]["cache"]["reason"] == "first"
    before = await version(client, "s")

    # A budget that would fold (auto and even force): a preview drops instead, stores nothing.
    for mode in ("auto", "force"):
        small = await context(
            client, "s", max_tokens=600, preview="true", summarize=mode, explain="true"
        )
        assert small["summarized"] is False
        statuses = {item["status"] for item in small["explain"]}
        assert "dropped" in statuses and "summarized" not in statuses
    other_model = await context(client, "s", model="gpt-4o", preview="true")
    assert other_model["model"] == "gpt-4o"
    assert await version(client, "s") == before
    assert recorder.calls == []

    # The next real request compares against the last real one, not against the previews.
    again = await context(client, "s", max_tokens=5000)
    assert again["usage"]["cache"]["reason"] == "none"
    assert again["usage"]["cache"]["prefix_tokens"] >= real["usage"]["estimated_tokens"] - 10


async def test_a_preview_is_not_what_a_usage_report_calibrates_against(
    client: httpx.AsyncClient, recorder: RecordingSummarizer
) -> None:
    await create_session(client, id="s")
    await append(client, "s", *turns(6))
    real = await context(client, "s")
    await context(client, "s", max_tokens=300, preview="true")
    report = await client.post("/sessions/s/usage", json={"input_tokens": 1000})
    assert report.status_code == 200, report.text
    assert report.json()["estimated_tokens"] == real["usage"]["estimated_tokens"]
