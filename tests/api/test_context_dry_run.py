"""GET …/context?dry_run=true: the context the same request without it serves next, fold
included, and nothing stored (summary, history, lease, served record, summary cache)."""

from __future__ import annotations

import uuid
from typing import Any

import httpx
from hypothesis import given
from hypothesis import strategies as st

from app.main import create_app
from tests.support.apps import MakeClient, make_settings
from tests.support.factories import (
    append,
    context,
    create_session,
    tool_result,
    tool_use,
    turns,
    user,
)
from tests.support.hypothesis_settings import ON_THE_DATABASE
from tests.support.recording_summarizer import RecordingSummarizer


async def stored_state(client: httpx.AsyncClient, session_id: str) -> tuple[Any, Any]:
    session = (await client.get(f"/sessions/{session_id}")).json()
    history = (await client.get(f"/sessions/{session_id}/summaries")).json()["summaries"]
    return session["summary"], history


def without_dry_run(body: dict[str, Any]) -> dict[str, Any]:
    return {key: value for key, value in body.items() if key != "dry_run"}


async def test_a_dry_run_shows_the_fold_the_next_request_makes_and_stores_nothing(
    client: httpx.AsyncClient,
) -> None:
    await create_session(client, id="s", system_prompt="Be brief.")
    await append(client, "s", *turns(20))
    await context(client, "s")  # a served record, so usage.cache has something to compare
    before = await stored_state(client, "s")
    query = {"max_tokens": 1500, "explain": "true"}

    dry = await context(client, "s", dry_run="true", **query)
    again = await context(client, "s", dry_run="true", **query)
    assert await stored_state(client, "s") == before
    assert dry == again  # nothing a dry run did is seen by the next one

    assert dry["dry_run"]["fold"] == "computed" and dry["summarized"] is True
    assert dry["dry_run"]["messages_folded"] > 0 and dry["dry_run"]["strategy"] == "rule"
    statuses = [item["status"] for item in dry["explain"]]
    assert statuses.count("summarized") == dry["dry_run"]["messages_folded"]
    assert "dropped" not in statuses
    real = await context(client, "s", **query)
    assert real["summarized"] is True
    assert without_dry_run(dry) == real


async def test_a_dry_run_without_a_fold_due_is_the_next_context(
    client: httpx.AsyncClient,
) -> None:
    await create_session(client, id="s")
    await append(client, "s", *turns(3))
    dry = await context(client, "s", dry_run="true", explain="true", format="openai")
    assert dry["dry_run"] == {"fold": "none", "messages_folded": 0, "strategy": None}
    assert dry["summarized"] is False
    real = await context(client, "s", explain="true", format="openai")
    assert without_dry_run(dry) == real
    # The dry run left no record behind: the real request was the first one served.
    assert real["usage"]["cache"]["reason"] == "first"


async def test_a_dry_run_never_calls_an_external_model(
    make_client: MakeClient, db_url: str
) -> None:
    recorder = RecordingSummarizer()
    app = create_app(
        make_settings(db_url, anthropic_api_key="sk-ant-test", strategy="llm"),
        summarizer_factory=recorder.factory,
    )
    client = await make_client(app)
    await create_session(client, id="s")
    await append(client, "s", *turns(20))
    dry = await context(client, "s", dry_run="true", max_tokens=1500, explain="true")
    assert dry["dry_run"]["fold"] == "skipped" and dry["dry_run"]["strategy"] == "llm"
    assert dry["dry_run"]["messages_folded"] > 0
    assert dry["summarized"] is False and dry["summary"] is None
    assert recorder.calls == []
    assert (await stored_state(client, "s"))[1] == []
    # What it stands for: the next request folds that many messages with the model.
    real = await context(client, "s", max_tokens=1500)
    assert real["summarized"] is True
    assert len(recorder.calls[0].request.messages) == dry["dry_run"]["messages_folded"]


async def test_a_forced_dry_run_shows_a_forced_fold(client: httpx.AsyncClient) -> None:
    await create_session(client, id="s")
    await append(client, "s", user("task"), tool_use("c1", "run"), tool_result("c1", "ok"))
    await append(client, "s", *turns(4))
    dry = await context(client, "s", dry_run="true", summarize="force", keep_recent="2")
    assert dry["dry_run"]["fold"] == "computed"
    assert (await stored_state(client, "s"))[0] is None
    real = await context(client, "s", summarize="force", keep_recent="2")
    assert without_dry_run(dry) == real


@ON_THE_DATABASE
@given(
    rounds=st.lists(
        st.tuples(
            st.integers(1, 12), st.integers(400, 4000), st.sampled_from(["system", "messages"])
        ),
        min_size=1,
        max_size=4,
    )
)
async def test_every_dry_run_is_the_next_request(
    client: httpx.AsyncClient, rounds: list[tuple[int, int, str]]
) -> None:
    """Whatever the history, budget and summary placement, a dry run answers what the same
    request answers right after it, and the session is left as it was."""
    session_id = f"s-{uuid.uuid4().hex}"
    await create_session(client, id=session_id, system_prompt="Be brief.")
    appended = 0
    for count, budget, placement in rounds:
        await append(client, session_id, *turns(count, start=appended, words=40))
        appended += count
        query = {"max_tokens": budget, "explain": "true", "summary_placement": placement}
        before = await stored_state(client, session_id)
        dry = await context(client, session_id, dry_run="true", **query)
        assert await stored_state(client, session_id) == before
        assert without_dry_run(dry) == await context(client, session_id, **query)
