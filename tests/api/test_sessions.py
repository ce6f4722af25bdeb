from __future__ import annotations

import asyncio
import json
from collections.abc import MutableMapping
from datetime import UTC, datetime, timedelta
from typing import Any

import httpx
import pytest
from fastapi import FastAPI
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sqlalchemy import select, update

from app.core.cursors import decode_cursor, encode_cursor, encode_text
from app.core.errors import InvalidCursor
from app.models import Session
from app.schemas.sessions import SessionSort, SortOrder
from app.services.sessions import CURSOR_KIND, decode_page_cursor, encode_page_cursor
from tests.support.factories import append, assert_error, create_session, user


class TestCreateSession:
    async def test_returns_the_spec_shape(self, client: httpx.AsyncClient) -> None:
        response = await client.post(
            "/sessions",
            json={
                "id": "chat-42",
                "model": "claude-sonnet-4-5",
                "system_prompt": "You are terse.",
                "metadata": {"user": "ada"},
            },
        )
        assert response.status_code == 201
        body = response.json()
        assert body["id"] == "chat-42"
        assert body["model"] == "claude-sonnet-4-5"
        assert body["system_prompt"] == "You are terse."
        assert body["metadata"] == {"user": "ada"}
        assert body["message_count"] == 0
        assert body["total_tokens"] == 0
        assert body["summary"] is None
        assert body["settings"] == {}
        assert body["created_at"] and body["updated_at"]

    async def test_generates_a_uuid_and_uses_the_default_model(
        self, client: httpx.AsyncClient
    ) -> None:
        body = await create_session(client)
        assert len(body["id"]) == 36
        assert body["model"] == "claude-sonnet-4-6"
        assert (await client.get(f"/sessions/{body['id']}")).status_code == 200

    async def test_same_id_twice_is_409(self, client: httpx.AsyncClient) -> None:
        await create_session(client, id="dup")
        assert_error(await client.post("/sessions", json={"id": "dup"}), 409, "session_exists")

    async def test_unknown_model_is_422(self, client: httpx.AsyncClient) -> None:
        response = await client.post("/sessions", json={"model": "no-such-model"})
        assert_error(response, 422, "unknown_model")
        assert (await client.get("/sessions")).json()["sessions"] == []

    async def test_settings_are_validated(self, client: httpx.AsyncClient) -> None:
        unknown = await client.post("/sessions", json={"settings": {"treshold": 0.5}})
        error = assert_error(unknown, 422, "validation_error")
        assert error["details"][0]["loc"] == ["body", "settings", "treshold"]
        out_of_range = await client.post("/sessions", json={"settings": {"threshold": 1.5}})
        assert_error(out_of_range, 422, "validation_error")

    async def test_stores_valid_settings_and_tools(self, client: httpx.AsyncClient) -> None:
        tool = {"name": "read_file", "description": "Read", "input_schema": {"type": "object"}}
        body = await create_session(
            client, settings={"keep_recent": 4, "strategy": "rule"}, tools=[tool]
        )
        assert body["settings"] == {"keep_recent": 4, "strategy": "rule"}
        assert body["tools"][0]["name"] == "read_file"

    async def test_malformed_tool_is_422(self, client: httpx.AsyncClient) -> None:
        response = await client.post("/sessions", json={"tools": [{"description": "no name"}]})
        assert_error(response, 422, "invalid_tools")

    @pytest.mark.parametrize("bad_id", ["has space", "slash/inside", "", "x" * 300])
    async def test_unsafe_ids_are_rejected(self, client: httpx.AsyncClient, bad_id: str) -> None:
        assert_error(await client.post("/sessions", json={"id": bad_id}), 422, "validation_error")


class TestReadSession:
    async def test_counts_messages_and_tokens(self, client: httpx.AsyncClient) -> None:
        await create_session(client, id="s1")
        appended = await append(client, "s1", user("hello"), user("world, again"))
        body = (await client.get("/sessions/s1")).json()
        assert body["message_count"] == 2
        assert body["total_tokens"] == sum(m["token_count"] for m in appended)

    async def test_timestamps_read_back_as_utc(self, client: httpx.AsyncClient) -> None:
        created = await create_session(client, id="tz")
        read = (await client.get("/sessions/tz")).json()
        for field in ("created_at", "updated_at"):
            assert read[field].endswith(("Z", "+00:00")), read[field]
            assert datetime.fromisoformat(read[field]) == datetime.fromisoformat(created[field])

    async def test_missing_session_is_404(self, client: httpx.AsyncClient) -> None:
        error = assert_error(await client.get("/sessions/nope"), 404, "session_not_found")
        assert error["details"] == {"session_id": "nope"}


class TestListSessions:
    async def test_cursor_walks_every_session_once_in_creation_order(
        self, client: httpx.AsyncClient
    ) -> None:
        created = [(await create_session(client, id=f"s{i}"))["id"] for i in range(5)]
        seen: list[str] = []
        cursor: str | None = None
        while True:
            params: dict[str, str | int] = {"limit": 2}
            if cursor:
                params["cursor"] = cursor
            page = (await client.get("/sessions", params=params)).json()
            seen += [s["id"] for s in page["sessions"]]
            cursor = page["next_cursor"]
            if cursor is None:
                break
        assert seen == created

    async def test_last_full_page_has_no_cursor(self, client: httpx.AsyncClient) -> None:
        for i in range(2):
            await create_session(client, id=f"p{i}")
        page = (await client.get("/sessions", params={"limit": 2})).json()
        assert len(page["sessions"]) == 2
        assert page["next_cursor"] is None

    async def test_forged_cursor_is_422(self, client: httpx.AsyncClient) -> None:
        response = await client.get("/sessions", params={"cursor": "not-a-cursor"})
        assert_error(response, 422, "invalid_cursor")

    async def test_limit_bounds(self, client: httpx.AsyncClient) -> None:
        assert_error(await client.get("/sessions?limit=0"), 422, "validation_error")
        assert_error(await client.get("/sessions?limit=abc"), 422, "validation_error")


SORT_FIELDS = {
    "updated_at": lambda s: datetime.fromisoformat(s["updated_at"]),
    "message_count": lambda s: s["message_count"],
    "total_tokens": lambda s: s["total_tokens"],
    "summary_version": lambda s: (s["summary"] or {"version": 0})["version"],
    "created_at": lambda s: datetime.fromisoformat(s["created_at"]),
    "id": lambda s: s["id"],
}


async def walk(
    client: httpx.AsyncClient, limit: int, **params: str
) -> tuple[list[dict[str, Any]], int]:
    """Every session of one listing, following next_cursor; and the number of pages."""
    seen: list[dict[str, Any]] = []
    cursor: str | None = None
    pages = 0
    while True:
        query: dict[str, str | int] = {"limit": limit, **params}
        if cursor:
            query["cursor"] = cursor
        response = await client.get("/sessions", params=query)
        assert response.status_code == 200, response.text
        page = response.json()
        pages += 1
        assert len(page["sessions"]) <= limit
        seen += page["sessions"]
        cursor = page["next_cursor"]
        if cursor is None:
            return seen, pages
        assert len(page["sessions"]) == limit


def expected_order(
    sessions: list[dict[str, Any]], creation: list[str], sort: str, order: str
) -> list[str]:
    """The order a sort defines: its value, ties in creation order; `desc` reverses both."""
    rank = {sid: i for i, sid in enumerate(creation)}
    if sort == "creation":
        ordered = sorted(sessions, key=lambda s: rank[s["id"]])
    else:
        ordered = sorted(sessions, key=lambda s: (SORT_FIELDS[sort](s), rank[s["id"]]))
    if order == "desc":
        ordered.reverse()
    return [s["id"] for s in ordered]


class TestSortedListing:
    async def test_sorts_by_the_stored_counters(self, client: httpx.AsyncClient) -> None:
        for sid in ("few", "many", "big"):
            await create_session(client, id=sid)
        await append(client, "many", user("one"), user("two"), user("three"))
        await append(client, "big", user("a long message about many things " * 20))
        await append(client, "few", user("hi"))
        ids = lambda page: [s["id"] for s in page["sessions"]]  # noqa: E731
        by_tokens = (await client.get("/sessions?sort=total_tokens&order=desc")).json()
        assert ids(by_tokens)[0] == "big"
        by_count = (await client.get("/sessions?sort=message_count&order=desc")).json()
        assert ids(by_count) == ["many", "big", "few"]
        # Last activity: "few" was appended to last, though created first.
        by_activity = (await client.get("/sessions?sort=updated_at&order=desc")).json()
        assert ids(by_activity)[0] == "few"
        by_id = (await client.get("/sessions?sort=id")).json()
        assert ids(by_id) == ["big", "few", "many"]

    async def test_default_is_creation_order_with_the_old_cursor(
        self, client: httpx.AsyncClient
    ) -> None:
        for i in range(3):
            await create_session(client, id=f"d{i}")
        page = (await client.get("/sessions", params={"limit": 1})).json()
        # The cursor format clients already hold.
        assert decode_cursor(CURSOR_KIND, page["next_cursor"]) > 0
        explicit = (await client.get("/sessions", params={"limit": 1, "order": "asc"})).json()
        assert explicit == page

    async def test_id_prefix_is_case_sensitive_and_literal(self, client: httpx.AsyncClient) -> None:
        for sid in ("agent-1", "agent-2", "Agent-3", "agentX", "user-agent", "a_b", "axb"):
            await create_session(client, id=sid)
        found, _ = await walk(client, 1, id_prefix="agent-", sort="id")
        assert [s["id"] for s in found] == ["agent-1", "agent-2"]
        found, _ = await walk(client, 2, id_prefix="a_")
        assert [s["id"] for s in found] == ["a_b"]  # `_` is not a wildcard
        empty = (await client.get("/sessions", params={"id_prefix": ""})).json()
        assert len(empty["sessions"]) == 7

    async def test_a_cursor_belongs_to_its_listing(self, client: httpx.AsyncClient) -> None:
        for i in range(3):
            await create_session(client, id=f"c{i}")
        plain = (await client.get("/sessions", params={"limit": 1})).json()["next_cursor"]
        tokens = (
            await client.get("/sessions", params={"limit": 1, "sort": "total_tokens"})
        ).json()["next_cursor"]
        for params in (
            {"cursor": plain, "sort": "total_tokens"},
            {"cursor": plain, "order": "desc"},
            {"cursor": plain, "id_prefix": "c"},
            {"cursor": tokens},
            {"cursor": tokens, "sort": "message_count"},
            {"cursor": tokens, "sort": "total_tokens", "order": "desc"},
        ):
            error = assert_error(
                await client.get("/sessions", params=params), 422, "cursor_mismatch"
            )
            assert set(error["details"]) == {"cursor_for", "request"}
        ok = await client.get("/sessions", params={"cursor": tokens, "sort": "total_tokens"})
        assert ok.status_code == 200

    @pytest.mark.parametrize(
        "query",
        [
            "sort=tokens",
            "sort=",
            "sort=pk",
            "order=up",
            "id_prefix=a%20b",
            "id_prefix=%00",
            "id_prefix=" + "a" * 257,
        ],
    )
    async def test_invalid_parameters_are_422(self, client: httpx.AsyncClient, query: str) -> None:
        assert_error(await client.get(f"/sessions?{query}"), 422, "validation_error")

    async def test_paging_any_sort_yields_each_session_once_in_order(
        self, app: FastAPI, client: httpx.AsyncClient
    ) -> None:
        """Generated counters with many ties (updated_at too), any sort, order, page size
        and id filter: the pages are the whole listing, once each, in the sort's order."""
        creation = [
            (await create_session(client, id=sid))["id"]
            for sid in ("k0", "k1", "m0", "k2", "m1", "k3", "m2", "k4", "z0")
        ]
        loop = asyncio.get_running_loop()
        base = datetime(2026, 1, 1, tzinfo=UTC)

        def run(coro: Any) -> Any:
            return asyncio.run_coroutine_threadsafe(coro, loop).result()

        async def store(values: list[tuple[int, int, int, int]]) -> None:
            async with app.state.sessionmaker() as db:
                for sid, (seq, tokens, version, minute) in zip(creation, values, strict=True):
                    await db.execute(
                        update(Session)
                        .where(Session.external_id == sid)
                        .values(
                            last_seq=seq,
                            live_tokens=tokens,
                            summary_version=version,
                            updated_at=base + timedelta(minutes=minute),
                        )
                    )
                await db.commit()

        small = st.integers(min_value=0, max_value=3)
        row = st.tuples(small, st.sampled_from([0, 7, 2**31 - 1]), small, small)

        @settings(
            max_examples=30,
            deadline=None,
            suppress_health_check=[HealthCheck.function_scoped_fixture],
        )
        @given(
            values=st.lists(row, min_size=len(creation), max_size=len(creation)),
            sort=st.sampled_from(["creation", *SORT_FIELDS]),
            order=st.sampled_from(["asc", "desc"]),
            limit=st.integers(min_value=1, max_value=10),
            prefix=st.sampled_from(["", "k", "m1", "q"]),
        )
        def check(
            values: list[tuple[int, int, int, int]], sort: str, order: str, limit: int, prefix: str
        ) -> None:
            run(store(values))
            params = {"order": order}
            if sort != "creation":
                params["sort"] = sort
            if prefix:
                params["id_prefix"] = prefix
            seen, pages = run(walk(client, limit, **params))
            ids = [s["id"] for s in seen]
            assert len(ids) == len(set(ids))
            wanted = [s for s in run(walk(client, 200))[0] if s["id"].startswith(prefix)]
            assert ids == expected_order(wanted, creation, sort, order)
            assert pages == max(1, -(-len(ids) // limit))

        await asyncio.to_thread(check)


class TestUpdateSession:
    async def test_settings_merge_and_metadata_replace(self, client: httpx.AsyncClient) -> None:
        await create_session(client, id="u", settings={"keep_recent": 4}, metadata={"a": 1})
        response = await client.patch(
            "/sessions/u", json={"settings": {"threshold": 0.5}, "metadata": {"b": 2}}
        )
        assert response.status_code == 200
        body = response.json()
        assert body["settings"] == {"keep_recent": 4, "threshold": 0.5}
        assert body["metadata"] == {"b": 2}

    async def test_null_setting_drops_the_override(self, client: httpx.AsyncClient) -> None:
        await create_session(client, id="u2", settings={"keep_recent": 4, "threshold": 0.7})
        body = (await client.patch("/sessions/u2", json={"settings": {"keep_recent": None}})).json()
        assert body["settings"] == {"threshold": 0.7}

    async def test_absent_fields_are_untouched(self, client: httpx.AsyncClient) -> None:
        await create_session(client, id="u3", system_prompt="keep me")
        body = (await client.patch("/sessions/u3", json={"model": "gpt-4o"})).json()
        assert body["model"] == "gpt-4o"
        assert body["system_prompt"] == "keep me"

    async def test_unknown_model_and_missing_session(self, client: httpx.AsyncClient) -> None:
        await create_session(client, id="u4")
        assert_error(
            await client.patch("/sessions/u4", json={"model": "nope"}), 422, "unknown_model"
        )
        assert_error(await client.patch("/sessions/zz", json={}), 404, "session_not_found")


class TestDeleteSession:
    async def test_removes_session_and_messages(self, client: httpx.AsyncClient) -> None:
        await create_session(client, id="d")
        await append(client, "d", user("bye"))
        response = await client.delete("/sessions/d")
        assert response.status_code == 204
        assert response.content == b""
        assert_error(await client.get("/sessions/d"), 404, "session_not_found")
        assert_error(await client.get("/sessions/d/messages"), 404, "session_not_found")
        # The id is free again, and the new session starts empty.
        await create_session(client, id="d")
        assert (await client.get("/sessions/d/messages")).json()["messages"] == []

    async def test_missing_session_is_404(self, client: httpx.AsyncClient) -> None:
        assert_error(await client.delete("/sessions/never"), 404, "session_not_found")


class TestUnitOfWork:
    async def test_committed_before_the_response_is_sent(
        self, app: FastAPI, client: httpx.AsyncClient
    ) -> None:
        """A client that got 201 must be able to read its write on another connection."""
        visible_at_response_start: list[bool] = []
        body = json.dumps({"id": "uow"}).encode()

        async def receive() -> dict[str, object]:
            return {"type": "http.request", "body": body, "more_body": False}

        async def send(message: MutableMapping[str, object]) -> None:
            if message["type"] == "http.response.start":
                async with app.state.sessionmaker() as other:
                    row = await other.scalar(select(Session).where(Session.external_id == "uow"))
                    visible_at_response_start.append(row is not None)

        scope = {
            "type": "http",
            "asgi": {"version": "3.0"},
            "http_version": "1.1",
            "method": "POST",
            "scheme": "http",
            "path": "/sessions",
            "raw_path": b"/sessions",
            "root_path": "",
            "query_string": b"",
            "headers": [(b"content-type", b"application/json"), (b"host", b"test")],
            "client": ("127.0.0.1", 1234),
            "server": ("test", 80),
        }
        await app(scope, receive, send)
        assert visible_at_response_start == [True]


class TestSummaryOnTheWire:
    async def test_stored_summary_state_is_the_nested_object(
        self, app: FastAPI, client: httpx.AsyncClient
    ) -> None:
        await create_session(client, id="sum")
        appended = await append(client, "sum", user("one"), user("two"), user("three"))
        async with app.state.sessionmaker() as db:
            row = await db.scalar(select(Session).where(Session.external_id == "sum"))
            assert row is not None
            row.conversation_summary = "Task: count to three."
            row.summary_through_id = appended[1]["id"]
            row.summary_through_seq = 2
            row.summary_version = 1
            row.summary_message_count = 2
            row.summary_tokens = 7
            row.summary_method = "rule"
            await db.commit()
        body = (await client.get("/sessions/sum")).json()
        assert body["summary"] == {
            "text": "Task: count to three.",
            "version": 1,
            "through_id": appended[1]["id"],
            "through_seq": 2,
            "message_count": 2,
            "tokens": 7,
            "method": "rule",
        }
        # Summaries never hide stored messages.
        assert body["message_count"] == 3

    async def test_total_tokens_count_only_messages_after_the_clear_marker(
        self, client: httpx.AsyncClient
    ) -> None:
        await create_session(client, id="clr")
        await append(client, "clr", user("old", client_id="a"), user("older"))
        assert (await client.post("/sessions/clr/clear")).status_code == 200
        after = await append(client, "clr", user("new message", client_id="b"))
        await append(client, "clr", user("new message", client_id="b"))  # a retry: no-op
        body = (await client.get("/sessions/clr")).json()
        assert body["total_tokens"] == after[0]["token_count"]
        assert body["message_count"] == 3
        messages = (await client.get("/sessions/clr/messages")).json()["messages"]
        assert body["message_count"] == len(messages)


class TestCursor:
    @given(st.integers(min_value=0, max_value=2**31 - 1))
    def test_round_trips(self, pk: int) -> None:
        assert decode_cursor(CURSOR_KIND, encode_cursor(CURSOR_KIND, pk)) == pk

    @given(st.integers(min_value=2**31))
    def test_positions_beyond_a_sql_integer_are_rejected(self, pk: int) -> None:
        with pytest.raises(InvalidCursor):
            decode_cursor(CURSOR_KIND, encode_cursor(CURSOR_KIND, pk))

    @given(st.text(max_size=40))
    def test_anything_else_is_rejected_or_a_valid_position(self, text: str) -> None:
        try:
            pk = decode_cursor(CURSOR_KIND, text)
        except InvalidCursor as exc:
            assert (exc.status_code, exc.code) == (422, "invalid_cursor")
            return
        assert 0 <= pk <= 2**31 - 1
        assert encode_cursor(CURSOR_KIND, pk) == text  # only the exact text issued

    @given(
        st.sampled_from([None, *SessionSort]),
        st.sampled_from(list(SortOrder)),
        st.sampled_from([None, "a", "agent-"]),
        st.integers(min_value=0, max_value=2**31 - 1),
    )
    def test_sorted_cursors_round_trip(
        self, sort: SessionSort | None, order: SortOrder, prefix: str | None, pk: int
    ) -> None:
        value: Any = {
            SessionSort.updated_at: datetime(2026, 5, 1, 12, 0, 0, 123456, tzinfo=UTC),
            SessionSort.created_at: datetime(2026, 5, 1, tzinfo=UTC),
            SessionSort.id: "agent-7",
            None: None,
        }.get(sort, 42)
        cursor = encode_page_cursor(sort, order, prefix, value, pk)
        assert decode_page_cursor(cursor, sort, order, prefix) == (value, pk)

    @given(st.text(max_size=60), st.sampled_from([None, *SessionSort]))
    def test_anything_else_is_rejected_by_the_sorted_decoder(
        self, text: str, sort: SessionSort | None
    ) -> None:
        try:
            decode_page_cursor(text, sort, SortOrder.asc, None)
        except InvalidCursor as exc:
            assert (exc.status_code, exc.code) == (422, "invalid_cursor")

    @pytest.mark.parametrize(
        "listing",
        [
            {"s": "total_tokens", "o": "asc", "q": "", "v": 2**31, "k": 1},
            {"s": "total_tokens", "o": "asc", "q": "", "v": True, "k": 1},
            {"s": "total_tokens", "o": "asc", "q": "", "v": 1, "k": -1},
            {"s": "id", "o": "asc", "q": "", "v": "a\u0000", "k": 1},
            {"s": "updated_at", "o": "asc", "q": "", "v": "2026-01-01T00:00:00", "k": 1},
            {"s": "nope", "o": "asc", "q": "", "v": 1, "k": 1},
            {"s": "total_tokens", "o": "asc", "q": "", "v": 1},
        ],
    )
    def test_forged_sorted_cursors_are_invalid(self, listing: dict[str, Any]) -> None:
        cursor = encode_text("s2:" + json.dumps(listing))
        sort = SessionSort(listing["s"]) if listing["s"] in set(SessionSort) else None
        with pytest.raises(InvalidCursor) as caught:
            decode_page_cursor(cursor, sort, SortOrder.asc, None)
        assert caught.value.code == "invalid_cursor"
