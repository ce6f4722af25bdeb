"""The response cache across replicas (app/services/response_cache.py).

Two worlds on one database, each a tenant with a session "s": in the *cached* world, replica
A serves the contexts from its cache while replica B (another app on the same database)
appends, folds, clears, patches, reports usage and serves other contexts; in the *plain*
world, replica C, its cache off, does the same things in the same order. Every context A
serves must equal the one C computes (but for message ids), and the first read after a change
must not be a hit.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from typing import Any

import httpx
import pytest
from fastapi import FastAPI
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from app.core.settings import Settings
from app.main import create_app
from app.services.context import ContextOptions, Snapshot
from app.services.context_load import SnapshotLoader
from app.services.response_cache import ENTRY_OVERHEAD, Entry, ResponseCache, Stamp, cache_key
from tests.support.apps import MakeClient, make_settings
from tests.support.factories import (
    append,
    assert_error,
    assistant,
    comparable,
    create_session,
    turns,
    user,
)
from tests.support.recording_summarizer import RecordingSummarizer

KEYS = "cached:key-cached,plain:key-plain"
BUDGET = {"max_tokens": 2500}


@dataclass
class Worlds:
    a: httpx.AsyncClient  # cached world: the replica that serves from its cache
    b: httpx.AsyncClient  # cached world: another replica that changes things
    c: httpx.AsyncClient  # plain world: cache off
    cache: ResponseCache  # A's

    async def both(self, method: str, path: str, *, on_a: bool = False, **kwargs: Any) -> None:
        """The same request on B (or A: `on_a`) of the cached world and on C (plain world)."""
        for client in (self.a if on_a else self.b, self.c):
            response = await client.request(method, path, **kwargs)
            assert response.status_code < 300, response.text

    async def read(self, expect_hit: bool, **params: Any) -> bytes:
        """A's context, checked against C's: twice, the second time from A's cache."""
        path = "/sessions/s/context"
        hits = self.cache.hits
        first = await self.a.get(path, params=params)
        plain = await self.c.get(path, params=params)
        assert first.status_code == plain.status_code == 200, first.text
        assert comparable(first) == comparable(plain)
        assert self.cache.hits == hits + int(expect_hit), "stale: a hit after a change"
        again, plain_again = (
            await self.a.get(path, params=params),
            await self.c.get(path, params=params),
        )
        assert comparable(again) == comparable(plain_again)
        assert self.cache.hits == hits + int(expect_hit) + 1
        return again.content


async def replica(make_client: MakeClient, app: FastAPI, key: str) -> httpx.AsyncClient:
    """A client of `app` (one replica) as the tenant of `key`."""
    client = await make_client(app)
    client.headers["Authorization"] = f"Bearer {key}"
    return client


@pytest.fixture
async def worlds(make_client: MakeClient, db_url: str) -> Worlds:
    cached, plain = RecordingSummarizer(), RecordingSummarizer()
    # Folds go to a recorder: one shared by the cached replicas A and B, one for C.
    app_a = create_app(make_settings(db_url, api_keys=KEYS), summarizer_factory=cached.factory)
    app_b = create_app(make_settings(db_url, api_keys=KEYS), summarizer_factory=cached.factory)
    plain_settings = make_settings(db_url, api_keys=KEYS, context_cache_bytes=0)
    app_c = create_app(plain_settings, summarizer_factory=plain.factory)
    a = await replica(make_client, app_a, "key-cached")
    b = await replica(make_client, app_b, "key-cached")
    c = await replica(make_client, app_c, "key-plain")
    for client in (b, c):
        await create_session(client, id="s")
    return Worlds(a, b, c, app_a.state.read_path.responses)


class TestAcrossReplicas:
    async def test_every_change_made_on_another_replica_is_seen_at_once(
        self, worlds: Worlds
    ) -> None:
        await worlds.both("POST", "/sessions/s/messages", json={"messages": turns(3)})
        first = await worlds.read(expect_hit=False, **BUDGET)
        assert b'"reason":"first"' not in first  # the copy kept is the next request's
        await worlds.read(expect_hit=True, **BUDGET)

        changes: list[tuple[str, str, dict[str, Any]]] = [
            ("POST", "/sessions/s/messages", {"json": {"messages": turns(2, start=3)}}),
            ("POST", "/sessions/s/summarize", {}),
            ("POST", "/sessions/s/messages", {"json": {"messages": turns(1, start=5)}}),
            # A usage report refers to the context last served: exact on the replica that
            # served it (another one knows the last context recorded, test_usage.py).
            ("POST", "/sessions/s/usage", {"json": {"input_tokens": 900}, "on_a": True}),
            ("PATCH", "/sessions/s", {"json": {"settings": {"keep_recent": 2}}}),
            ("PATCH", "/sessions/s", {"json": {"system_prompt": "Be brief."}}),
            ("GET", "/sessions/s/context", {"params": {"format": "openai"}}),
            ("POST", "/sessions/s/clear", {}),
            ("POST", "/sessions/s/messages", {"json": {"messages": turns(1, start=6)}}),
        ]
        for method, path, kwargs in changes:
            await worlds.both(method, path, **kwargs)
            await worlds.read(expect_hit=False, **BUDGET)

    async def test_a_context_folded_by_the_request_is_kept_unfolded(self, worlds: Worlds) -> None:
        await worlds.both("POST", "/sessions/s/messages", json={"messages": turns(12)})
        await worlds.read(expect_hit=False, max_tokens=1200)  # folds on A and on C
        body = await worlds.read(expect_hit=True, max_tokens=1200)
        assert b'"summarized":false' in body

    async def test_a_deleted_and_recreated_session_is_not_served_from_the_cache(
        self, worlds: Worlds
    ) -> None:
        await worlds.both("POST", "/sessions/s/messages", json={"messages": turns(2)})
        await worlds.read(expect_hit=False)
        await worlds.both("DELETE", "/sessions/s")
        assert_error(await worlds.a.get("/sessions/s/context"), 404, "session_not_found")
        await worlds.both("POST", "/sessions", json={"id": "s"})
        await worlds.both("POST", "/sessions/s/messages", json={"messages": turns(2)})
        await worlds.read(expect_hit=False)

    async def test_a_context_for_another_model_keeps_this_one_cached(self, worlds: Worlds) -> None:
        await worlds.both("POST", "/sessions/s/messages", json={"messages": turns(2)})
        await worlds.read(expect_hit=False)
        await worlds.both("GET", "/sessions/s/context", params={"model": "gpt-4o"})
        await worlds.read(expect_hit=True)
        # Same model, another budget: the record behind usage.cache is replaced.
        await worlds.both("GET", "/sessions/s/context", params={"max_tokens": 100_000})
        body = await worlds.read(expect_hit=False)
        assert b'"reason":"none"' in body

    async def test_a_change_racing_the_request_that_fills_the_cache_is_seen(
        self, worlds: Worlds, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        await worlds.both("POST", "/sessions/s/messages", json={"messages": turns(2)})
        load = SnapshotLoader.load
        raced: list[bool] = []

        async def load_then_race(
            loader: SnapshotLoader,
            session_id: str,
            options: ContextOptions,
            base: Snapshot | None,
        ) -> Snapshot:
            snapshot = await load(loader, session_id, options, base)
            if not raced:  # B appends after A read its snapshot, before A stores the body
                raced.append(True)
                await append(worlds.b, "s", user("The racing message"))
            return snapshot

        monkeypatch.setattr(SnapshotLoader, "load", load_then_race)
        first = await worlds.a.get("/sessions/s/context")
        assert b"The racing message" not in first.content
        hits = worlds.cache.hits
        again = await worlds.a.get("/sessions/s/context")
        assert worlds.cache.hits == hits
        assert b"The racing message" in again.content


class TestWhatIsCached:
    def test_forced_folds_focus_triggers_and_previews_are_never_cached(self) -> None:
        assert cache_key("t", "s", b"", ContextOptions()) is not None
        assert cache_key("t", "s", b"", ContextOptions(mode="force")) is None
        assert cache_key("t", "s", b"", ContextOptions(focus="billing")) is None
        assert cache_key("t", "s", b"", ContextOptions(trigger="manual")) is None
        assert cache_key("t", "s", b"", ContextOptions(record_served=False)) is None

    def test_tenant_session_and_the_whole_query_string_are_the_key(self) -> None:
        plain = cache_key("t", "s", b"max_tokens=9", ContextOptions())
        assert plain == cache_key("t", "s", b"max_tokens=9", ContextOptions())
        assert plain != cache_key("u", "s", b"max_tokens=9", ContextOptions())
        assert plain != cache_key("t", "s2", b"max_tokens=9", ContextOptions())
        assert plain != cache_key("t", "s", b"max_tokens=9&explain=true", ContextOptions())

    def test_bounded_by_bytes_least_recently_used_out(self) -> None:
        unit = ENTRY_OVERHEAD + 25  # an entry of 25 body bytes, charged with its bookkeeping
        cache = ResponseCache(max_bytes=4 * unit)
        stamp = Stamp(version=None, calibration=None, record=None)  # type: ignore[arg-type]
        for key in "abcd":
            cache.put(key, Entry(stamp, "m", "f", b"x" * 25))
        assert cache.get("a") is not None  # now the most recent
        cache.put("e", Entry(stamp, "m", "f", b"x" * 25))
        assert cache.get("b") is None and cache.get("a") is not None
        assert cache.size == 4 * unit and len(cache) == 4
        cache.put("huge", Entry(stamp, "m", "f", b"x" * 26))  # over a quarter: not kept
        assert cache.get("huge") is None and len(cache) == 4
        cache.put("long query", Entry(stamp, "m", "f", b"x" * 5), key_bytes=21)  # 26 in all
        assert cache.get("long query") is None and cache.size == 4 * unit


async def test_the_cache_can_be_turned_off(make_client: MakeClient, db_url: str) -> None:
    settings: Settings = make_settings(db_url, context_cache_bytes=0)
    app = create_app(settings)
    client = await make_client(app)
    await create_session(client, id="s")
    await append(client, "s", user("Hello"), assistant("Hi"))
    for _ in range(3):
        assert (await client.get("/sessions/s/context")).status_code == 200
    assert app.state.read_path.responses.hits == 0 and len(app.state.read_path.responses) == 0


async def test_hits_and_stale_entries_are_counted_in_metrics(worlds: Worlds) -> None:
    await worlds.both("POST", "/sessions/s/messages", json={"messages": turns(1)})
    await worlds.read(expect_hit=False)
    await worlds.both("POST", "/sessions/s/messages", json={"messages": turns(1, start=1)})
    await worlds.read(expect_hit=False)
    metrics = (await worlds.a.get("/metrics")).text
    for result in ("hit", "miss", "stale"):
        assert f'foldwise_context_cache_total{{result="{result}"}}' in metrics
    assert "foldwise_context_cache_bytes " in metrics
    assert "foldwise_context_cache_evictions_total " in metrics


READS = st.sampled_from(
    [{}, {"max_tokens": 1500}, {"max_tokens": 1500, "explain": True}, {"format": "raw"}]
)
CHANGES = st.lists(
    st.one_of(
        st.tuples(st.just("append"), st.integers(min_value=1, max_value=4)),
        st.tuples(st.just("fold"), st.none()),
        st.tuples(st.just("clear"), st.none()),
        st.tuples(st.just("patch"), st.sampled_from([1, 2, 6])),
        st.tuples(st.just("usage"), st.sampled_from([500, 5000])),
        st.tuples(
            st.just("other"),
            st.sampled_from([{"format": "openai"}, {"model": "gpt-4o"}, {"max_tokens": 100_000}]),
        ),
    ),
    min_size=1,
    max_size=8,
)


def change(name: str, argument: Any, appended: int) -> tuple[str, str, dict[str, Any]]:
    """The request (on B, and mirrored on C) of one generated change."""
    if name == "append":
        return "POST", "/messages", {"json": {"messages": turns(argument, appended)}}
    if name == "patch":
        return "PATCH", "", {"json": {"settings": {"keep_recent": argument}}}
    if name == "usage":
        return "POST", "/usage", {"json": {"input_tokens": argument}}
    if name == "other":
        return "GET", "/context", {"params": argument}
    return "POST", f"/{'summarize' if name == 'fold' else 'clear'}", {}


@settings(
    max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(read=READS, changes=CHANGES)
async def test_any_sequence_of_changes_on_another_replica_is_never_served_stale(
    worlds: Worlds, read: dict[str, Any], changes: list[tuple[str, Any]]
) -> None:
    sid, appended = f"p-{uuid.uuid4().hex}", 2
    for client in (worlds.b, worlds.c):
        await create_session(client, id=sid)
    await append(worlds.b, sid, *turns(2))
    await append(worlds.c, sid, *turns(2))
    for name, argument in [("read", None), *changes]:
        if name != "read":
            method, path, kwargs = change(name, argument, appended)
            appended += argument if name == "append" else 0
            # A usage report goes to A, which served the context it reports on (an exact
            # estimate only there: test_usage.py).
            changer = worlds.a if name == "usage" else worlds.b
            statuses = [
                (await client.request(method, f"/sessions/{sid}{path}", **kwargs)).status_code
                for client in (changer, worlds.c)
            ]
            assert statuses[0] == statuses[1], (name, statuses)
        for _ in range(2):  # A's first read after the change, then one from its cache
            cached = await worlds.a.get(f"/sessions/{sid}/context", params=read)
            plain = await worlds.c.get(f"/sessions/{sid}/context", params=read)
            assert cached.status_code == plain.status_code == 200
            assert comparable(cached) == comparable(plain)
