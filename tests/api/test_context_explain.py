"""explain=true lists every stored message after the clear marker without changing the
context: the messages the summary covers are read without their content."""

from __future__ import annotations

import uuid

import httpx
from hypothesis import given
from hypothesis import strategies as st

from tests.support.factories import append, context, create_session, turns
from tests.support.hypothesis_settings import ON_THE_DATABASE

STEPS = st.lists(
    st.tuples(st.integers(1, 10), st.integers(300, 3000), st.booleans(), st.booleans()),
    min_size=1,
    max_size=4,
)


@ON_THE_DATABASE
@given(steps=STEPS)
async def test_explain_changes_nothing_but_the_listing(
    client: httpx.AsyncClient, steps: list[tuple[int, int, bool, bool]]
) -> None:
    session_id = f"s-{uuid.uuid4().hex}"
    await create_session(client, id=session_id, system_prompt="Be brief.")
    appended = cleared_through = 0
    for count, budget, pin, clear in steps:
        await append(client, session_id, *turns(count, start=appended, words=40))
        appended += count
        if clear:
            assert (await client.post(f"/sessions/{session_id}/clear")).status_code == 200
            cleared_through = 2 * appended
            await append(client, session_id, *turns(2, start=appended, words=40))
            appended += 2
        query = {"max_tokens": budget, "pin_first_message": str(pin).lower()}
        plain = await context(client, session_id, **query)  # folds when it must
        explained = await context(client, session_id, explain="true", **query)
        listed = explained.pop("explain")
        plain["usage"]["cache"] = explained["usage"]["cache"]  # the second read of the same
        assert explained == plain | {"summarized": False}
        stored = [item for item in listed if item["status"] != "synthetic"]
        assert [item["seq"] for item in stored] == list(
            range(cleared_through + 1, 2 * appended + 1)
        )
        through = (explained["summary"] or {}).get("through_seq", 0)
        messages = (
            await client.get(f"/sessions/{session_id}/messages", params={"limit": 1000})
        ).json()
        tokens = {m["id"]: m["token_count"] for m in messages["messages"]}
        for item in stored:
            if item["status"] == "summarized":
                assert item["seq"] <= through and item["tokens"] == tokens[item["id"]]
