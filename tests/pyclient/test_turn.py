"""`turn()` of `Foldwise` and `AsyncFoldwise` against a real server (SQLite and PostgreSQL):
the append and the context of one POST /sessions/{id}/turn."""

from __future__ import annotations

from typing import Any

import pytest
from foldwise_client import Context, Turn, UnprocessableEntityError

from tests.pyclient.conftest import AsyncView, new_id


def _without_cache(context: Context) -> dict[str, Any]:
    """The body, but for what tells it from the context served before it."""
    body = {**context.raw, "usage": dict(context.usage), "summarized": None}
    del body["usage"]["cache"]
    return body


async def test_a_turn_appends_and_answers_the_context(fw: AsyncView) -> None:
    sid = (await fw.create_session(new_id("turn"), system_prompt="Be brief."))["id"]
    taken = await fw.turn(
        sid, [{"role": "user", "content": "Hello"}], format="openai", max_tokens=4000
    )
    assert isinstance(taken, Turn) and isinstance(taken.context, Context)
    (appended,) = taken.append["messages"]
    assert appended["seq"] == 1 and appended["client_id"] and not appended["duplicate"]
    kwargs = taken.context.openai_kwargs()
    assert kwargs["messages"] == [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": "Hello"},
    ]
    read = await fw.context(sid, format="openai", max_tokens=4000)
    assert _without_cache(read) == _without_cache(taken.context)
    assert read.usage["cache"]["prefix_tokens"] == taken.context.usage["estimated_tokens"]


async def test_a_repeated_turn_stores_once(fw: AsyncView) -> None:
    sid = (await fw.create_session(new_id("turn")))["id"]
    batch = [{"role": "user", "content": "Once", "client_id": "u-1"}]
    first = await fw.turn(sid, batch, keep_recent=2)
    again = await fw.turn(sid, batch, keep_recent=2)
    assert [m["duplicate"] for m in again.append["messages"]] == [True]
    assert again.append["messages"][0]["id"] == first.append["messages"][0]["id"]
    assert again.context.messages == first.context.messages
    assert len((await fw.list_messages(sid))["messages"]) == 1


async def test_a_refused_turn_stores_nothing(fw: AsyncView) -> None:
    sid = (await fw.create_session(new_id("turn")))["id"]
    with pytest.raises(UnprocessableEntityError) as refused:
        await fw.turn(sid, [{"role": "user", "content": "Hello"}], max_tokens=0)
    assert refused.value.code == "validation_error"
    assert (await fw.list_messages(sid))["messages"] == []
