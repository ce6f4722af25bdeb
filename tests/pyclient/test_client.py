"""Every method of `Foldwise` and `AsyncFoldwise` against a real server (SQLite and
PostgreSQL), each test once per client."""

from __future__ import annotations

import inspect
from typing import Any

import pytest
from foldwise_client import (
    APIStatusError,
    AsyncFoldwise,
    ConflictError,
    Context,
    Foldwise,
    FormatMismatchError,
    NoMessagesError,
)

from tests.pyclient.conftest import AsyncView, new_id

TOOL = {
    "name": "read_file",
    "description": "Read a file",
    "input_schema": {"type": "object", "properties": {"path": {"type": "string"}}},
}


def transcript(pairs: int, words: int = 80) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for i in range(pairs):
        out.append({"role": "user", "content": f"Question {i}: " + "detail " * words})
        out.append({"role": "assistant", "content": f"Answer {i}: " + "result " * words})
    return out


def test_sync_and_async_clients_have_the_same_methods() -> None:
    def public(cls: type) -> dict[str, list[tuple[str, Any, Any]]]:
        return {
            name: [
                (p.name, p.kind, p.default)
                for p in inspect.signature(getattr(cls, name)).parameters.values()
            ]
            for name in dir(cls)
            if not name.startswith("_") and callable(getattr(cls, name))
        }

    sync, asynchronous = public(Foldwise), public(AsyncFoldwise)
    assert sync == asynchronous
    assert {"create_session", "append_messages", "context", "pop_message"} <= set(sync)
    for name in sync:
        method = getattr(AsyncFoldwise, name)
        if name.startswith("iter_"):
            assert inspect.isasyncgenfunction(method), name
        else:
            assert inspect.iscoroutinefunction(method), name


async def test_session_lifecycle(fw: AsyncView) -> None:
    sid = new_id("life")
    created = await fw.create_session(
        sid,
        model="gpt-4o",
        system_prompt="Be brief.",
        tools=[TOOL],
        settings={"keep_recent": 4},
        metadata={"user": "ada"},
    )
    assert created["id"] == sid
    assert created["model"] == "gpt-4o"
    assert created["settings"] == {"keep_recent": 4}
    assert created["tools"] is not None and created["tools"][0]["name"] == "read_file"
    assert (await fw.get_session(sid))["metadata"] == {"user": "ada"}

    updated = await fw.update_session(
        sid, system_prompt=None, settings={"keep_recent": None, "threshold": 0.5}, metadata={}
    )
    assert updated["system_prompt"] is None
    assert updated["settings"] == {"threshold": 0.5}
    assert updated["metadata"] == {}
    assert updated["tools"] is not None, "a field not given is left as it is"
    assert updated["model"] == "gpt-4o"

    await fw.delete_session(sid)
    with pytest.raises(Exception) as caught:
        await fw.get_session(sid)
    assert type(caught.value).__name__ == "SessionNotFoundError"


async def test_create_without_id_gets_one(fw: AsyncView) -> None:
    session = await fw.create_session()
    assert len(session["id"]) >= 32
    await fw.delete_session(session["id"])


async def test_list_and_iter_sessions_follow_cursors(fw: AsyncView) -> None:
    prefix = new_id("page")
    ids = [f"{prefix}-{i}" for i in range(5)]
    for sid in ids:
        await fw.create_session(sid)
    page = await fw.list_sessions(limit=2, id_prefix=prefix)
    assert [s["id"] for s in page["sessions"]] == ids[:2]
    assert page["next_cursor"] is not None
    second = await fw.list_sessions(limit=2, id_prefix=prefix, cursor=page["next_cursor"])
    assert [s["id"] for s in second["sessions"]] == ids[2:4]
    every = await fw.iter_sessions(id_prefix=prefix, page_size=2)
    assert [s["id"] for s in every] == ids
    newest = await fw.iter_sessions(id_prefix=prefix, sort="id", order="desc", page_size=3)
    assert [s["id"] for s in newest] == ids[::-1]


async def test_append_gives_every_message_a_client_id(fw: AsyncView) -> None:
    sid = (await fw.create_session(new_id("append")))["id"]
    mine = {"role": "user", "content": "hello", "client_id": "mine-1"}
    posted = [mine, {"role": "assistant", "content": "hi"}]
    result = await fw.append_messages(sid, posted)
    stored = result["messages"]
    assert [m["seq"] for m in stored] == [1, 2]
    assert stored[0]["client_id"] == "mine-1"
    assert stored[1]["client_id"] and stored[1]["client_id"] != "mine-1"
    assert "client_id" not in posted[1], "the caller's messages are not changed"
    assert not any(m["duplicate"] for m in stored)
    assert [m["indexes"] for m in stored] == [[0], [1]]

    again = await fw.append_messages(sid, [mine])
    assert again["messages"][0]["duplicate"] is True
    assert again["messages"][0]["seq"] == 1
    assert (await fw.get_session(sid))["message_count"] == 2


async def test_list_and_iter_messages(fw: AsyncView) -> None:
    sid = (await fw.create_session(new_id("msgs")))["id"]
    await fw.append_messages(sid, transcript(3, words=2))
    page = await fw.list_messages(sid, limit=4)
    assert [m["seq"] for m in page["messages"]] == [1, 2, 3, 4]
    assert page["next_after_seq"] == 4
    rest = await fw.list_messages(sid, after_seq=4)
    assert [m["seq"] for m in rest["messages"]] == [5, 6]
    every = await fw.iter_messages(sid, page_size=4)
    assert [m["seq"] for m in every] == [1, 2, 3, 4, 5, 6]
    assert every[0]["content"].startswith("Question 0")
    assert [m["seq"] for m in await fw.iter_messages(sid, after_seq=5)] == [6]
    assert every[0]["items"] is None
    as_items = await fw.iter_messages(sid, page_size=4, format="openai_responses")
    assert [m["seq"] for m in as_items] == [1, 2, 3, 4, 5, 6]
    first, answer = as_items[0]["items"], as_items[1]["items"]
    assert first == [{"role": "user", "content": every[0]["content"]}]  # posted as a string
    assert answer == [{"type": "message", "role": "assistant", "content": every[1]["content"]}]


async def test_context_in_each_format_unpacks_into_the_sdks(fw: AsyncView) -> None:
    sid = (await fw.create_session(new_id("ctx"), system_prompt="Be brief.", tools=[TOOL]))["id"]
    await fw.append_messages(sid, transcript(1, words=2))

    ctx = await fw.context(sid)
    assert isinstance(ctx, Context)
    assert ctx.session_id == sid and ctx.format == "anthropic"
    kwargs = ctx.anthropic_kwargs()
    assert kwargs["model"] == "claude-sonnet-4-6"
    assert kwargs["max_tokens"] == ctx.usage["reserved_output_tokens"] == 4096
    assert kwargs["messages"] == ctx.messages and len(ctx.messages) == 2
    assert kwargs["tools"][0]["name"] == "read_file"
    assert "Be brief." in str(kwargs["system"])
    assert ctx.anthropic_kwargs(100, model="claude-haiku-4-5")["max_tokens"] == 100
    with pytest.raises(FormatMismatchError):
        ctx.openai_kwargs()

    chat = (await fw.context(sid, format="openai")).openai_kwargs()
    assert chat["messages"][0] == {"role": "system", "content": "Be brief."}
    assert chat["tools"][0]["function"]["name"] == "read_file"
    assert set(chat) == {"model", "messages", "tools"}

    raw = await fw.context(sid, format="raw", explain=True, cache_breakpoints=False)
    assert raw.explain is not None and [e["status"] for e in raw.explain] == ["included"] * 2
    with pytest.raises(FormatMismatchError):
        raw.anthropic_kwargs()


async def test_context_folds_and_summaries_are_listed(fw: AsyncView) -> None:
    sid = (await fw.create_session(new_id("fold"), settings={"keep_recent": 2}))["id"]
    await fw.append_messages(sid, transcript(8))

    preview = await fw.context(sid, max_tokens=700, preview=True)
    assert not preview.summarized and preview.summary is None
    assert preview.dry_run is None
    dry = await fw.context(sid, max_tokens=700, strategy="rule", prune_at_least=0, dry_run=True)
    assert dry.dry_run is not None and dry.dry_run["fold"] == "computed"
    assert dry.summarized and dry.summary is not None and dry.summary["version"] == 1
    ctx = await fw.context(sid, max_tokens=700, strategy="rule", prune_at_least=0)
    assert ctx.messages == dry.messages  # what the dry run showed, now stored
    assert ctx.summarized and ctx.summary is not None and ctx.summary["version"] == 1
    assert ctx.usage["total_tokens"] <= ctx.usage["budget"] == 700
    assert ctx.messages_included < ctx.messages_total == 16

    history = await fw.list_summaries(sid)
    assert [s["version"] for s in history["summaries"]] == [1]
    assert history["summaries"][0]["method"] == "rule"

    await fw.append_messages(sid, transcript(2))
    folded = await fw.summarize(sid, focus="the answers", strategy="rule")
    assert folded["folded"] is True and folded["summary"]["version"] == 2
    nothing = await fw.summarize(sid)
    assert nothing["folded"] is False

    report = await fw.report_usage(sid, ctx.usage["estimated_tokens"] + 50)
    assert report["estimated_tokens"] == ctx.usage["estimated_tokens"]
    assert report["input_tokens"] == ctx.usage["estimated_tokens"] + 50
    assert report["calibration"]["family"] == "anthropic"

    cleared = await fw.clear(sid)
    assert cleared["summary"] is not None and cleared["summary"]["method"] == "clear"
    assert (await fw.context(sid)).messages == []
    page = await fw.list_summaries(sid, limit=1)
    assert page["summaries"][0]["method"] == "clear" and page["next_cursor"] is not None


async def test_stateless_routes(fw: AsyncView) -> None:
    text = await fw.count_tokens(text="hello world", model="gpt-4o")
    assert text == {
        "tokens": 2,
        "encoding": "o200k_base",
        "exact": True,
        "model": "gpt-4o",
        "media": [],
        "media_rule": "openai-tiles-4o",
        "counted_by": "rules",
        "warnings": [],
    }
    messages = [{"role": "user", "content": "How many tokens is this?"}]
    counted = await fw.count_tokens(messages=messages, tools=[TOOL])
    alone = await fw.count_tokens(messages=messages)
    assert counted["tokens"] > alone["tokens"] > 0

    models = await fw.list_models()
    assert {"claude-sonnet-4-5", "gpt-4o"} <= {m["name"] for m in models}

    posted = transcript(10)
    assembled = await fw.assemble_context(
        posted, system="Be brief.", max_tokens=600, keep_recent=2, format="openai"
    )
    assert assembled.session_id is None
    assert assembled.dropped and assembled.dropped[0] == 1
    assert assembled.usage["total_tokens"] <= 600
    assert assembled.openai_kwargs()["messages"][0]["role"] == "system"

    summary = await fw.summarize_context(posted[:4], strategy="rule", max_summary_tokens=200)
    assert summary["strategy"] == "rule" and summary["input_messages"] == 4
    assert "Question 0" in summary["summary"]
    assert summary["model"] is None and summary["usage"] is None  # no model was asked
    with pytest.raises(APIStatusError) as refused:
        await fw.summarize_context(posted[:4], summarizer="gemini:gemini-2.5-pro")
    assert refused.value.code == "summarizer_not_allowed"


async def test_responses_format_and_pop_message(fw: AsyncView) -> None:
    sid = (await fw.create_session(new_id("resp"), model="gpt-4o", system_prompt="Be brief."))["id"]
    with pytest.raises(NoMessagesError) as empty:
        await fw.pop_message(sid)
    assert (empty.value.status, empty.value.code) == (404, "no_messages")

    call_id = new_id("call")
    await fw.append_messages(
        sid,
        [
            {"role": "user", "content": "Weather?"},
            {"type": "function_call", "call_id": call_id, "name": "get_weather", "arguments": "{}"},
            {"type": "function_call_output", "call_id": call_id, "output": "sunny"},
        ],
    )
    kwargs = (await fw.context(sid, format="openai_responses")).openai_responses_kwargs()
    assert kwargs["model"] == "gpt-4o" and kwargs["instructions"] == "Be brief."
    assert kwargs["input"][0] == {"role": "user", "content": "Weather?"}  # as posted
    assert [i["type"] for i in kwargs["input"][1:]] == ["function_call", "function_call_output"]
    assert "tools" not in kwargs

    popped = await fw.pop_message(sid)
    assert popped["seq"] == 3 and popped["role"] == "tool"
    assert popped["items"] == [
        {"type": "function_call_output", "call_id": call_id, "output": "sunny"}
    ]
    assert (await fw.get_session(sid))["message_count"] == 2

    await fw.clear(sid)
    with pytest.raises(ConflictError) as folded:
        await fw.pop_message(sid)
    assert folded.value.status == 409


async def test_export_delete_import_and_delete_by_prefix(fw: AsyncView) -> None:
    """A session exported, deleted and imported answers the same context; a prefix delete
    removes exactly the sessions it names."""
    prefix = new_id("moving")
    sid = (await fw.create_session(f"{prefix}-a", system_prompt="Be exact."))["id"]
    await fw.append_messages(sid, transcript(6))
    before = await fw.context(sid, max_tokens=700, strategy="rule")
    exported = await fw.export_session(sid)
    assert exported.count("\n") >= 8 and '"end"' in exported.splitlines()[-1]
    await fw.delete_session(sid)
    imported = await fw.import_session(exported)
    assert imported["status"] == "created" and imported["messages"] == 12
    assert (await fw.import_session(exported))["status"] == "unchanged"
    after = await fw.context(sid, max_tokens=700, strategy="rule")
    assert (after.messages, after.summary) == (before.messages, before.summary)
    await fw.create_session(f"{prefix}-b")
    assert (await fw.delete_sessions(prefix)) == {"deleted": 2}
    assert (await fw.delete_sessions(prefix)) == {"deleted": 0}
