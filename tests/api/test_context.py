"""GET /sessions/{id}/context: verbatim, prune, fold (incremental, forward-only), never, force,
explain, formats, placements, settings precedence and errors — on SQLite and PostgreSQL."""

from __future__ import annotations

import uuid
from typing import Any

import httpx
import pytest
from fastapi import FastAPI
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from prometheus_client import REGISTRY

from app.services.context import ContextAssembler, ContextOptions
from tests.support.apps import MakeClient
from tests.support.factories import (
    append,
    assert_error,
    context,
    create_session,
    stored,
    tool_result,
    tool_use,
    turns,
    user,
)
from tests.support.recording_summarizer import RecordingSummarizer

BUDGET = 1500


def text_of(message: dict[str, Any]) -> str:
    content = message["content"]
    if isinstance(content, str):
        return content
    return "".join(str(block.get("text", "")) for block in content)


class TestVerbatim:
    async def test_under_budget_is_sent_verbatim_without_a_summarizer(
        self, client: httpx.AsyncClient, recorder: RecordingSummarizer
    ) -> None:
        await create_session(client, id="s", system_prompt="Be brief.")
        await append(client, "s", *turns(3, words=5))
        body = await context(client, "s", max_tokens=BUDGET)
        assert recorder.calls == []
        assert body["summarized"] is False and body["summary"] is None
        # Breakpoints (on by default for anthropic): end of system, and the newest message.
        assert body["system"] == [
            {"type": "text", "text": "Be brief.", "cache_control": {"type": "ephemeral"}}
        ]
        assert body["messages"][-1]["content"][-1]["cache_control"] == {"type": "ephemeral"}
        assert body["usage"]["cache"] == {"prefix_tokens": 0, "reason": "first", "breakpoints": 2}
        assert [m["role"] for m in body["messages"]] == ["user", "assistant"] * 3
        assert body["messages_included"] == body["messages_total"] == 6
        usage = body["usage"]
        assert usage["total_tokens"] == usage["estimated_tokens"]
        assert usage["calibration"] == {"family": "anthropic", "ratio": 1.0, "samples": 0}
        assert "explain" not in body

    async def test_default_budget_comes_from_the_model_window(
        self, client: httpx.AsyncClient, recorder: RecordingSummarizer
    ) -> None:
        await create_session(client, id="s")
        await append(client, "s", user("hi"))
        usage = (await context(client, "s"))["usage"]
        assert usage["budget"] == int(0.8 * usage["context_window"]) - 4096


class TestFold:
    async def test_over_budget_folds_once_and_persists_the_summary(
        self, client: httpx.AsyncClient, recorder: RecordingSummarizer
    ) -> None:
        await create_session(client, id="s")
        await append(client, "s", *turns(20))
        body = await context(client, "s", max_tokens=BUDGET)
        assert body["summarized"] is True
        assert len(recorder.calls) == 1
        request = recorder.calls[0].request
        assert request.previous_summary is None
        folded = [m.seq for m in request.messages]
        # The pinned task (seq 1) is never given to a summarizer.
        assert 1 not in folded and folded == list(range(2, folded[-1] + 1))
        summary = body["summary"]
        assert summary["version"] == 1 and summary["through_seq"] == folded[-1]
        assert summary["message_count"] == len(folded)
        assert summary["text"].startswith("summary #1")
        assert text_of(body["messages"][0]).startswith("Question 0")  # pinned, verbatim
        assert body["messages_total"] == 40

        again = await context(client, "s", max_tokens=BUDGET)
        assert again["summarized"] is False and len(recorder.calls) == 1
        assert again["summary"] == summary

    async def test_second_fold_reads_previous_summary_and_only_new_messages(
        self, client: httpx.AsyncClient, recorder: RecordingSummarizer
    ) -> None:
        await create_session(client, id="s")
        await append(client, "s", *turns(20))
        first = (await context(client, "s", max_tokens=BUDGET))["summary"]
        await append(client, "s", *turns(20, start=20))
        body = await context(client, "s", max_tokens=BUDGET)
        assert len(recorder.calls) == 2
        second = recorder.calls[1].request
        assert second.previous_summary == first["text"]
        assert min(m.seq for m in second.messages) == first["through_seq"] + 1
        summary = body["summary"]
        assert summary["version"] == 2 and summary["through_seq"] > first["through_seq"]
        assert summary["message_count"] == first["message_count"] + len(second.messages)

        history = (await client.get("/sessions/s/summaries")).json()["summaries"]
        assert [h["version"] for h in history] == [2, 1]
        assert history[0]["through_seq"] == summary["through_seq"]
        assert history[0]["stats"]["trigger"] == "threshold"
        assert history[0]["stats"]["tokens_before"] > history[0]["stats"]["tokens_after"]

    async def test_folds_never_alter_stored_messages(
        self, client: httpx.AsyncClient, recorder: RecordingSummarizer
    ) -> None:
        await create_session(client, id="s")
        bulky = [user("read it"), tool_use("t1", path="big.log"), tool_result("t1", "log\n" * 900)]
        await append(client, "s", *bulky, *turns(20))
        before = await stored(client, "s")
        pruned = await context(client, "s", max_tokens=4000, summarize="never", explain=True)
        assert any(e["status"] == "pruned" for e in pruned["explain"])
        await context(client, "s", max_tokens=BUDGET)
        await client.post("/sessions/s/summarize")
        await client.post("/sessions/s/clear")
        assert await stored(client, "s") == before

    async def test_fallback_summary_is_replaced_by_the_next_llm_fold(
        self, client: httpx.AsyncClient, recorder: RecordingSummarizer
    ) -> None:
        recorder.methods = ["fallback", "llm"]
        await create_session(client, id="s")
        await append(client, "s", *turns(20))
        first = (await context(client, "s", max_tokens=BUDGET))["summary"]
        assert first["method"] == "fallback"
        await append(client, "s", *turns(20, start=20))
        second = (await context(client, "s", max_tokens=BUDGET))["summary"]
        assert second["method"] == "llm"
        assert recorder.calls[1].request.previous_summary == first["text"]

    async def test_a_small_budget_shortens_the_summary_for_that_response_only(
        self, client: httpx.AsyncClient, recorder: RecordingSummarizer
    ) -> None:
        recorder.padding = 600  # the summary ignores its cap: ~600 tokens
        await create_session(client, id="s")
        await append(client, "s", *turns(20))
        stored_summary = (await context(client, "s", max_tokens=20_000, summarize="force"))[
            "summary"
        ]
        tight = await context(
            client, "s", max_tokens=400, summarize="never", cache_breakpoints=False
        )
        assert "[… truncated" in tight["system"] and tight["summary"] == stored_summary
        assert len(recorder.calls) == 1  # no re-compression: history is not rewritten
        again = await context(client, "s", max_tokens=20_000, cache_breakpoints=False)
        assert again["summary"] == stored_summary and stored_summary["text"] in again["system"]
        assert len((await client.get("/sessions/s/summaries")).json()["summaries"]) == 1

    async def test_a_summary_over_its_share_that_fits_is_sent_as_stored(
        self, client: httpx.AsyncClient, recorder: RecordingSummarizer
    ) -> None:
        recorder.padding = 600  # every summary ignores its cap
        await create_session(client, id="s")
        await append(client, "s", *turns(20))
        await context(client, "s", max_tokens=20_000, summarize="force")
        for _ in range(2):
            body = await context(client, "s", max_tokens=20_000, max_summary_tokens=100)
            assert body["summary"]["version"] == 1
            # Sent as stored (the whole context still fits), flagged, never re-written.
            assert any("over its share" in warning for warning in body["warnings"])
        assert len((await client.get("/sessions/s/summaries")).json()["summaries"]) == 1


class TestLoading:
    async def test_after_a_fold_only_pinned_and_live_messages_are_read(
        self, app: FastAPI, client: httpx.AsyncClient, recorder: RecordingSummarizer
    ) -> None:
        await create_session(client, id="s")
        await append(client, "s", *turns(20))
        through = (await context(client, "s", max_tokens=BUDGET))["summary"]["through_seq"]
        assembler = ContextAssembler(
            app.state.sessionmaker, "default", app.state.settings, app.state.registry,
            recorder.factory,
        )  # fmt: skip
        snapshot = await assembler.loader.load("s", ContextOptions(max_tokens=BUDGET))
        assert [m.seq for m in snapshot.messages] == [1, *range(through + 1, 41)]
        assert snapshot.messages_total == 40
        explained = await assembler.loader.load("s", ContextOptions(explain=True))
        assert explained.messages == snapshot.messages  # the covered ones: no content read
        assert [c.seq for c in explained.covered] == list(range(1, through + 1))

    async def test_pinned_message_found_behind_many_tool_results(
        self, app: FastAPI, client: httpx.AsyncClient, recorder: RecordingSummarizer
    ) -> None:
        await create_session(client, id="s")
        calls = [m for i in range(20) for m in (tool_use(f"t{i}"), tool_result(f"t{i}", "ok"))]
        await append(client, "s", *calls, user("the real task"), *turns(20))
        body = await context(client, "s", max_tokens=BUDGET)
        assert body["summary"]["through_seq"] > 41
        assert text_of(body["messages"][0]).startswith("the real task")
        assembler = ContextAssembler(
            app.state.sessionmaker, "default", app.state.settings, app.state.registry,
            recorder.factory,
        )  # fmt: skip
        snapshot = await assembler.loader.load("s", ContextOptions(max_tokens=BUDGET))
        assert snapshot.messages[0].seq == 41

    async def test_folds_are_counted_in_metrics(
        self, client: httpx.AsyncClient, recorder: RecordingSummarizer
    ) -> None:
        def folds() -> float:
            labels = {"trigger": "threshold", "method": "rule"}
            return REGISTRY.get_sample_value("foldwise_folds_total", labels) or 0.0

        before = folds()
        await create_session(client, id="s")
        await append(client, "s", *turns(20))
        await context(client, "s", max_tokens=BUDGET)
        assert folds() == before + 1
        metrics = (await client.get("/metrics")).text
        assert 'foldwise_folds_total{method="rule",trigger="threshold"}' in metrics


class TestModes:
    async def test_never_drops_oldest_without_a_summarizer(
        self, client: httpx.AsyncClient, recorder: RecordingSummarizer
    ) -> None:
        await create_session(client, id="s")
        await append(client, "s", *turns(20))
        body = await context(client, "s", max_tokens=BUDGET, summarize="never", explain=True)
        assert recorder.calls == [] and body["summary"] is None
        statuses = {entry["status"] for entry in body["explain"]}
        assert "dropped" in statuses and "summarized" not in statuses
        assert body["messages_included"] < body["messages_total"]

    async def test_force_folds_all_but_the_recent_messages(
        self, client: httpx.AsyncClient, recorder: RecordingSummarizer
    ) -> None:
        await create_session(client, id="s")
        await append(client, "s", *turns(4, words=5))
        body = await context(client, "s", summarize="force", keep_recent=2)
        assert len(recorder.calls) == 1 and body["summarized"] is True
        folded = [m.seq for m in recorder.calls[0].request.messages]
        assert folded == [2, 3, 4, 5, 6]
        assert body["summary"]["through_seq"] == 6

    async def test_explain_lists_every_message_after_the_marker(
        self, client: httpx.AsyncClient, recorder: RecordingSummarizer
    ) -> None:
        await create_session(client, id="s")
        await append(client, "s", *turns(20))
        body = await context(client, "s", max_tokens=BUDGET, explain=True)
        entries = body["explain"]
        assert [e["seq"] for e in entries] == list(range(1, 41))
        through = body["summary"]["through_seq"]
        assert entries[0]["status"] == "included"  # the pinned task
        assert all(e["status"] == "summarized" for e in entries[1:through])
        assert all(e["status"] in ("included", "pruned") for e in entries[through:])
        sent = sum(e["status"] in ("included", "pruned", "truncated") for e in entries)
        assert sent == body["messages_included"]


class TestFormats:
    async def test_openai_puts_system_and_summary_first(
        self, client: httpx.AsyncClient, recorder: RecordingSummarizer
    ) -> None:
        await create_session(client, id="s", system_prompt="Be brief.")
        await append(client, "s", *turns(20))
        body = await context(client, "s", max_tokens=BUDGET, format="openai")
        assert body["system"] is None
        head = body["messages"][0]
        assert head["role"] == "system" and head["content"].startswith("Be brief.")
        assert body["summary"]["text"] in head["content"]

    async def test_summary_as_a_message_pair(
        self, client: httpx.AsyncClient, recorder: RecordingSummarizer
    ) -> None:
        await create_session(client, id="s", settings={"summary_placement": "messages"})
        await append(client, "s", *turns(20))
        body = await context(client, "s", max_tokens=BUDGET)
        assert body["system"] is None
        first, second = body["messages"][:2]
        assert first["role"] == "user" and second["role"] == "assistant"
        assert body["summary"]["text"] in text_of(first)

    async def test_raw_returns_stored_shapes_and_tools(
        self, client: httpx.AsyncClient, recorder: RecordingSummarizer
    ) -> None:
        tool = {"name": "read_file", "description": "Read", "input_schema": {"type": "object"}}
        await create_session(client, id="s", system_prompt="S", tools=[tool])
        await append(
            client, "s", user("read it"), tool_use("t1", path="a.py"), tool_result("t1", "x")
        )
        body = await context(client, "s", format="raw")
        assert body["system"] == "S" and body["tools"] == [tool]
        assert body["usage"]["tools_tokens"] > 0
        assert body["messages"][1]["content"][0]["type"] == "tool_use"


class TestSettings:
    async def test_query_overrides_session_which_overrides_defaults(
        self, client: httpx.AsyncClient, recorder: RecordingSummarizer
    ) -> None:
        await create_session(client, id="s", settings={"threshold": 0.5})
        await append(client, "s", user("hi"))
        window = (await context(client, "s"))["usage"]["context_window"]
        assert (await context(client, "s"))["usage"]["budget"] == int(0.5 * window) - 4096
        usage = (await context(client, "s", threshold=0.25, reserved_output_tokens=0))["usage"]
        assert usage["threshold"] == 0.25 and usage["budget"] == int(0.25 * window)


class TestErrors:
    async def test_unknown_session_is_404(self, client: httpx.AsyncClient) -> None:
        assert_error(await client.get("/sessions/nope/context"), 404, "session_not_found")

    @pytest.mark.parametrize(
        "params", [{"format": "xml"}, {"summarize": "sometimes"}, {"max_tokens": 0}]
    )
    async def test_bad_query_is_422(
        self, client: httpx.AsyncClient, params: dict[str, Any]
    ) -> None:
        await create_session(client, id="s")
        assert_error(
            await client.get("/sessions/s/context", params=params), 422, "validation_error"
        )

    async def test_unknown_model_is_422(self, client: httpx.AsyncClient) -> None:
        await create_session(client, id="s")
        response = await client.get("/sessions/s/context", params={"model": "no-such-model"})
        assert_error(response, 422, "unknown_model")

    async def test_system_prompt_over_budget_is_budget_too_small(
        self, client: httpx.AsyncClient, recorder: RecordingSummarizer
    ) -> None:
        await create_session(client, id="s", system_prompt="rules " * 200)
        await append(client, "s", user("hi"))
        response = await client.get("/sessions/s/context", params={"max_tokens": 50})
        assert_error(response, 422, "budget_too_small")
        assert recorder.calls == []

    async def test_other_tenants_session_is_invisible(self, make_client: MakeClient) -> None:
        client = await make_client(api_keys="a:key-a,b:key-b")
        headers_a = {"Authorization": "Bearer key-a"}
        assert (
            await client.post("/sessions", json={"id": "s"}, headers=headers_a)
        ).status_code == 201
        response = await client.get(
            "/sessions/s/context", headers={"Authorization": "Bearer key-b"}
        )
        assert_error(response, 404, "session_not_found")


@pytest.mark.parametrize("budget", [200, 400, 900, 2500])
async def test_never_over_budget_whatever_the_budget(
    client: httpx.AsyncClient, recorder: RecordingSummarizer, budget: int
) -> None:
    await create_session(client, id="s", system_prompt="Be brief.")
    await append(client, "s", *turns(15), user("big " * 3000))
    for mode in ("auto", "never", "force"):
        body = await context(client, "s", max_tokens=budget, summarize=mode)
        assert body["messages"][0]["role"] == "user"


Operation = tuple[str, int]
OPERATIONS = st.lists(
    st.one_of(
        st.tuples(st.just("append"), st.integers(min_value=1, max_value=12)),
        st.tuples(st.just("context"), st.integers(min_value=300, max_value=3000)),
        st.tuples(st.just("force"), st.integers(min_value=0, max_value=4)),
        st.tuples(st.just("clear"), st.just(0)),
    ),
    min_size=1,
    max_size=8,
)


@settings(
    max_examples=12,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(operations=OPERATIONS)
async def test_summary_state_only_moves_forward(
    client: httpx.AsyncClient, recorder: RecordingSummarizer, operations: list[Operation]
) -> None:
    """Whatever happens, versions grow by one per history row, through never moves back,
    every response fits its budget and the stored messages stay as appended."""
    session_id = f"s-{uuid.uuid4().hex}"
    await create_session(client, id=session_id, system_prompt="Be brief.")
    appended = 0
    for kind, number in operations:
        if kind == "append":
            await append(client, session_id, *turns(number, start=appended, words=30))
            appended += number
        elif kind == "context":
            await context(client, session_id, max_tokens=number)
        elif kind == "force":
            await context(client, session_id, summarize="force", keep_recent=number)
        else:
            assert (await client.post(f"/sessions/{session_id}/clear")).status_code == 200
    history = (await client.get(f"/sessions/{session_id}/summaries")).json()["summaries"]
    oldest_first = list(reversed(history))
    assert [row["version"] for row in oldest_first] == list(range(1, len(history) + 1))
    through = [row["through_seq"] for row in oldest_first]
    assert through == sorted(through) and all(seq <= 2 * appended for seq in through)
    messages = await stored(client, session_id)
    assert [m["seq"] for m in messages] == list(range(1, 2 * appended + 1))
    assert [text_of(m) for m in messages] == [text_of(m) for m in turns(appended, words=30)]
    # The session's running counters agree with what is stored.
    session = (await client.get(f"/sessions/{session_id}")).json()
    cleared = max((r["through_seq"] for r in history if r["method"] == "clear"), default=0)
    assert session["message_count"] == len(messages)
    assert session["total_tokens"] == sum(m["token_count"] for m in messages if m["seq"] > cleared)
