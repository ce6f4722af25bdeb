"""GET /sessions/{id}/context and prompt caching: one output message per stored message,
thinking blocks, `cache_control` breakpoints, `usage.cache`, one fold per request."""

from __future__ import annotations

import uuid
from typing import Any

import httpx
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.support.factories import (
    append,
    assistant,
    context,
    create_session,
    tool_result,
    turns,
    user,
)
from tests.support.recording_summarizer import RecordingSummarizer

EPHEMERAL = {"type": "ephemeral"}
THINKING = {"type": "thinking", "thinking": "private plan", "signature": "c2lnbmF0dXJl"}


def cache(body: dict[str, Any]) -> dict[str, Any]:
    result: dict[str, Any] = body["usage"]["cache"]
    return result


class TestOneToOne:
    async def test_same_role_turns_are_not_merged_and_the_pinned_message_is_verbatim(
        self, client: httpx.AsyncClient, recorder: RecordingSummarizer
    ) -> None:
        await create_session(client, id="s")
        await append(client, "s", user("The task"), user("and one more thing"), assistant("OK"))
        body = await context(client, "s", cache_breakpoints=False, explain=True)
        assert body["messages"] == [
            {"role": "user", "content": "The task"},
            {"role": "user", "content": "and one more thing"},
            {"role": "assistant", "content": "OK"},
        ]
        assert body["messages_included"] == len(body["messages"]) == 3

    async def test_a_continuation_turn_is_flagged_in_explain(
        self, client: httpx.AsyncClient, recorder: RecordingSummarizer
    ) -> None:
        await create_session(client, id="s")
        await append(client, "s", assistant("Hello, what shall we do?"))
        body = await context(client, "s", explain=True, pin_first_message=False)
        assert body["messages_included"] == len(body["messages"]) == 2
        assert body["explain"][0] == {
            "id": "continuation",
            "seq": 0,
            "status": "synthetic",
            "tokens": 0,
        }


class TestThinking:
    async def test_kept_byte_for_byte_in_anthropic_and_dropped_in_openai(
        self, client: httpx.AsyncClient, recorder: RecordingSummarizer
    ) -> None:
        await create_session(client, id="s")
        call = {"type": "tool_use", "id": "t1", "name": "read_file", "input": {"path": "a.py"}}
        turn = {"role": "assistant", "content": [THINKING, call]}
        await append(client, "s", user("go"), turn, tool_result("t1", "print(1)"))
        anthropic = await context(client, "s", cache_breakpoints=False)
        assert anthropic["messages"][1]["content"][0] == THINKING
        openai = await context(client, "s", format="openai")
        assert "private plan" not in str(openai) and "signature" not in str(openai)
        assert openai["messages"][1]["tool_calls"][0]["id"] == "t1"


def client_marked(count: int) -> list[dict[str, Any]]:
    """User turns carrying the client's own cache_control markers."""
    block = {"type": "text", "cache_control": EPHEMERAL}
    return [{"role": "user", "content": [{**block, "text": f"m{i}"}]} for i in range(count)]


class TestBreakpoints:
    async def test_client_markers_count_toward_the_limit_of_four(
        self, client: httpx.AsyncClient, recorder: RecordingSummarizer
    ) -> None:
        await create_session(client, id="s", system_prompt="S")
        await append(client, "s", *client_marked(3), assistant("ok"))
        body = await context(client, "s")
        assert cache(body)["breakpoints"] == 1  # the newest message; none left for system
        assert body["system"] == "S"
        assert body["messages"][-1]["content"] == [
            {"type": "text", "text": "ok", "cache_control": EPHEMERAL}
        ]

    async def test_off_by_parameter_and_never_in_openai(
        self, client: httpx.AsyncClient, recorder: RecordingSummarizer
    ) -> None:
        await create_session(client, id="s", system_prompt="S")
        await append(client, "s", user("hi"))
        off = await context(client, "s", cache_breakpoints=False)
        assert off["system"] == "S" and cache(off)["breakpoints"] == 0
        openai = await context(client, "s", format="openai")
        assert "cache_control" not in str(openai["messages"])

    async def test_summary_pair_gets_the_stable_breakpoint(
        self, client: httpx.AsyncClient, recorder: RecordingSummarizer
    ) -> None:
        await create_session(client, id="s", system_prompt="S")
        await append(client, "s", *turns(20))
        body = await context(
            client, "s", max_tokens=1500, summary_placement="messages", summarize="force"
        )
        ack = body["messages"][1]
        assert ack["role"] == "assistant" and ack["content"][-1]["cache_control"] == EPHEMERAL
        # The system prompt keeps its own breakpoint: tools + system stay cached across folds.
        assert body["system"] == [{"type": "text", "text": "S", "cache_control": EPHEMERAL}]
        assert cache(body)["breakpoints"] == 3


TOOLS = [
    {
        "name": "read_file",
        "description": "Read a file of the repository",
        "input_schema": {"type": "object", "properties": {"path": {"type": "string"}}},
    }
]


async def count(client: httpx.AsyncClient, text: str) -> int:
    tokens: int = (await client.post("/count-tokens", json={"text": text})).json()["tokens"]
    return tokens


class TestSystemBlocksAcrossAFold:
    async def test_the_system_prompt_block_survives_a_fold_byte_for_byte(
        self, client: httpx.AsyncClient, recorder: RecordingSummarizer
    ) -> None:
        prompt = "You are a careful coding agent. " * 20
        await create_session(client, id="s", system_prompt=prompt, tools=TOOLS)
        await append(client, "s", *turns(12))
        before = await context(client, "s", max_tokens=3000)
        assert before["summary"] is None
        assert before["system"] == [{"type": "text", "text": prompt, "cache_control": EPHEMERAL}]
        await append(client, "s", *turns(12, start=12))
        folded = await context(client, "s", max_tokens=3000, summarize="force")
        first, section = folded["system"]
        assert first == before["system"][0]
        assert section["cache_control"] == EPHEMERAL
        assert (
            section["text"] == "\n\nSummary of earlier conversation:\n" + folded["summary"]["text"]
        )
        usage = folded["usage"]
        assert cache(folded)["reason"] == "fold"
        assert cache(folded)["prefix_tokens"] == usage["system_tokens"] + usage["tools_tokens"]
        assert await count(client, first["text"]) == usage["system_tokens"]  # counted as sent
        assert await count(client, section["text"]) == usage["summary_tokens"]

    async def test_client_markers_leave_the_newest_message_and_the_summary_theirs(
        self, client: httpx.AsyncClient, recorder: RecordingSummarizer
    ) -> None:
        await create_session(client, id="s", system_prompt="S")
        await append(client, "s", *turns(12), *client_marked(2), assistant("ok"))
        body = await context(client, "s", max_tokens=1500, keep_recent=4, summarize="force")
        assert body["summary"] is not None and cache(body)["breakpoints"] == 2
        assert body["system"][0] == {"type": "text", "text": "S"}  # third in line: left out
        assert body["system"][1]["cache_control"] == EPHEMERAL
        assert str(body).count("cache_control") == 4


class TestUsageCache:
    async def test_reports_the_shared_prefix_and_what_broke_it(
        self, client: httpx.AsyncClient, recorder: RecordingSummarizer
    ) -> None:
        await create_session(client, id="s", system_prompt="Be brief.")
        await append(client, "s", *turns(2))
        first = await context(client, "s", max_tokens=5000)
        assert cache(first)["reason"] == "first" and cache(first)["prefix_tokens"] == 0
        await append(client, "s", *turns(1, start=2))
        appended = await context(client, "s", max_tokens=5000)
        assert cache(appended)["reason"] == "none"
        assert cache(appended)["prefix_tokens"] >= first["usage"]["estimated_tokens"] - 10
        assert cache(await context(client, "s", max_tokens=5000))["reason"] == "none"
        assert cache(await context(client, "s", max_tokens=5000, keep_recent=2))["reason"] in (
            "none",
            "settings",
        )
        narrowed = await context(client, "s", max_tokens=400, keep_recent=2, summarize="never")
        assert cache(narrowed)["reason"] == "budget"
        folded = await context(client, "s", max_tokens=400, keep_recent=2, summarize="force")
        assert cache(folded)["reason"] == "fold"
        assert cache(folded)["prefix_tokens"] == folded["usage"]["system_tokens"] > 0  # kept
        await client.post("/sessions/s/clear")
        await append(client, "s", user("a new start"))
        cleared = await context(client, "s", max_tokens=400, keep_recent=2)
        assert cache(cleared)["reason"] == "clear"

    async def test_format_change_is_a_settings_change(
        self, client: httpx.AsyncClient, recorder: RecordingSummarizer
    ) -> None:
        await create_session(client, id="s", system_prompt="S")
        await append(client, "s", *turns(2))
        await context(client, "s")
        assert cache(await context(client, "s", format="openai"))["reason"] == "settings"


class TestPrefixStability:
    async def test_after_a_fold_later_turns_only_append(
        self, client: httpx.AsyncClient, recorder: RecordingSummarizer
    ) -> None:
        await create_session(client, id="s", system_prompt="S")
        await append(client, "s", user("The task"))
        reasons, pruned_after_fold = [], set()
        for i in range(40):
            call = {"type": "tool_use", "id": f"t{i}", "name": "read_file", "input": {}}
            output = tool_result(f"t{i}", f"value{i} " * 300)  # bulky: pruned to an excerpt
            await append(client, "s", {"role": "assistant", "content": [call]}, output)
            body = await context(client, "s", max_tokens=6000, explain=True)
            reasons.append(cache(body)["reason"])
            pruned = {e["id"] for e in body["explain"] if e["status"] == "pruned"}
            if reasons[-1] == "fold":
                # In the request that folded, older output left verbatim is pruned at once;
                # at this budget (about 8 outputs) the fold takes all but the recent ones.
                stored = [e for e in body["explain"] if e["status"] != "synthetic"]
                older = stored[1:-6]  # all but the pinned task and the last keep_recent
                assert older and {e["status"] for e in older} <= {"pruned", "summarized"}
                pruned_after_fold = pruned
            elif pruned_after_fold:
                assert pruned_after_fold <= pruned
        first_fold = reasons.index("fold")
        assert reasons[0] == "first" and set(reasons[1:first_fold]) <= {"none", "prune"}
        after = reasons[first_fold + 1 : first_fold + 4]
        assert after == ["none"] * 3, reasons  # the next turns only append


class TestOneFoldPerRequest:
    async def test_force_with_a_small_budget_bumps_the_version_once(
        self, client: httpx.AsyncClient, recorder: RecordingSummarizer
    ) -> None:
        recorder.padding = 600  # summaries over their share
        await create_session(client, id="s")
        await append(client, "s", *turns(20))
        body = await context(client, "s", max_tokens=900, summarize="force")
        assert body["summary"]["version"] == 1 and len(recorder.calls) == 1
        assert len(recorder.calls[0].request.messages) > 0  # a fold of messages, not a re-write


REQUESTS = st.lists(
    st.tuples(
        st.integers(min_value=0, max_value=8),  # turns appended before the request
        st.sampled_from([250, 600, 1500, 4000]),
        st.sampled_from(["auto", "force", "never"]),
        st.sampled_from(["anthropic", "openai", "raw"]),
    ),
    min_size=1,
    max_size=6,
)


@settings(
    max_examples=10, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(requests=REQUESTS)
async def test_each_request_folds_at_most_once_and_sends_one_message_per_message(
    client: httpx.AsyncClient, recorder: RecordingSummarizer, requests: list[Any]
) -> None:
    session_id = f"p-{uuid.uuid4().hex}"
    await create_session(client, id=session_id, system_prompt="Be brief.")
    await append(client, session_id, user("The task: keep it short"))
    version, appended = 0, 0
    for new_turns, budget, mode, fmt in requests:
        if new_turns:
            await append(client, session_id, *turns(new_turns, start=appended, words=40))
            appended += new_turns
        calls = len(recorder.calls)
        body = await context(
            client, session_id, max_tokens=budget, summarize=mode, format=fmt, explain=True
        )
        now = body["summary"]["version"] if body["summary"] else 0
        assert now - version <= 1 and len(recorder.calls) - calls <= 1
        version = now
        assert body["messages_included"] == len(body["messages"])
        pinned = next((e for e in body["explain"] if e["seq"] == 1), None)
        if fmt != "openai" and pinned is not None and pinned["status"] == "included":
            first = next(m for m in body["messages"] if m["role"] == "user")
            text = first["content"] if isinstance(first["content"], str) else first["content"][0]
            assert text in (
                "The task: keep it short",
                {"type": "text", "text": "The task: keep it short", "cache_control": EPHEMERAL},
            )
