"""GET /sessions/{id}/export and POST /sessions/import: a session moves with its ids, seqs and
summary versions, so its context is the same bytes after (the same JSON across databases)."""

from __future__ import annotations

import asyncio
import itertools
import json
import os
import shutil
import uuid
from collections.abc import AsyncIterator, Iterator
from datetime import datetime
from pathlib import Path
from typing import Any

import httpx
import pytest
from hypothesis import HealthCheck, Phase, example, given, settings
from hypothesis import strategies as st
from pydantic import BaseModel

from app.engine.prompt_cache import CHAIN_HEAD, chain_elements
from app.main import create_app
from app.repositories import transfer as transfer_rows
from app.schemas.transfer import MessageRecord, SessionRecord, SummaryRecord
from app.services import transfer
from tests.support.apps import MakeClient, make_settings
from tests.support.databases import migrated_postgres_database, truncate
from tests.support.factories import assert_error, create_session
from tests.support.session_builder import (
    SETUP,
    STEP,
    build_session,
    read_context,
    two_tenants,
)

READS = [{}, {"format": "openai"}, {"format": "raw", "explain": "true"}]


async def export(client: httpx.AsyncClient, session_id: str) -> bytes:
    response = await client.get(f"/sessions/{session_id}/export")
    assert response.status_code == 200, response.text
    assert response.headers["content-type"] == "application/x-ndjson"
    return response.content


async def contexts(client: httpx.AsyncClient, session_id: str) -> list[bytes]:
    return [(await read_context(client, session_id, **read)).content for read in READS]


def lines(body: bytes) -> list[dict[str, Any]]:
    return [json.loads(line) for line in body.splitlines()]


def jsonl(records: list[dict[str, Any]]) -> bytes:
    return b"".join(json.dumps(r).encode() + b"\n" for r in records)


def resealed(records: list[dict[str, Any]]) -> bytes:
    """`records` with an end record that matches them (a forged but well-sealed export)."""
    checksum = transfer.Checksum()
    for record in records:
        if record["kind"] != "end":
            checksum.add(record)
    return jsonl([*(r for r in records if r["kind"] != "end"), checksum.end()])


@pytest.fixture(scope="session")
def postgres_target() -> Iterator[str]:
    """A second migrated PostgreSQL database: message ids are unique per database."""
    yield from migrated_postgres_database(f"foldwise_test_{os.getpid()}_target")


def fresh_database(kind: str, request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """An empty, migrated database of `kind` other than the test's own."""
    if kind == "sqlite":
        path = tmp_path / f"other-{uuid.uuid4().hex}.db"
        shutil.copyfile(request.getfixturevalue("sqlite_template"), path)
        return f"sqlite:///{path}"
    url: str = request.getfixturevalue("postgres_target")
    asyncio.run(truncate(url))
    return url


def kind_of(url: str) -> str:
    return "sqlite" if url.startswith("sqlite") else "postgres"


@pytest.fixture
def other_url(db_url: str, request: pytest.FixtureRequest, tmp_path: Path) -> str:
    return fresh_database(kind_of(db_url), request, tmp_path)


@pytest.fixture
async def servers(
    make_client: MakeClient, db_url: str, other_url: str
) -> tuple[httpx.AsyncClient, httpx.AsyncClient]:
    """A source on the test's database and a target on another database of its kind."""
    source, target = await serve_pair(make_client, db_url, other_url)
    return source, target


# A tenant per example: the usage calibration a tenant learns is shared by its sessions, and
# an import never overwrites one the target learned (test_the_calibration_travels_…).
TENANTS = 40
_next_tenant = itertools.count()


async def serve_pair(make_client: MakeClient, *urls: str) -> tuple[httpx.AsyncClient, ...]:
    keys = ",".join(f"t{n}:k{n}" for n in range(TENANTS))
    clients = tuple([await make_client(create_app(make_settings(u, api_keys=keys))) for u in urls])
    new_tenant(*clients)
    return clients


def new_tenant(*clients: httpx.AsyncClient) -> None:
    tenant = next(_next_tenant) % TENANTS
    for client in clients:
        client.headers["Authorization"] = f"Bearer k{tenant}"


@pytest.fixture(
    params=[
        pytest.param("sqlite-to-postgres", marks=pytest.mark.postgres),
        pytest.param("postgres-to-sqlite", marks=pytest.mark.postgres),
    ]
)
def crossing(request: pytest.FixtureRequest, tmp_path: Path) -> list[str]:
    """A source and a target URL, on the two kinds of database."""
    return [fresh_database(kind, request, tmp_path) for kind in request.param.split("-to-")]


async def moved(
    source: httpx.AsyncClient, target: httpx.AsyncClient, setup: dict[str, Any], steps: Any
) -> tuple[str, bytes]:
    """A session built on `source`, its contexts served, exported and imported to `target`,
    for a tenant of its own."""
    new_tenant(source, target)
    session_id = f"rt-{uuid.uuid4().hex[:12]}"
    await build_session(source, session_id, steps, setup)
    await contexts(source, session_id)
    body = await export(source, session_id)
    response = await target.post("/sessions/import", content=body)
    assert response.status_code == 201, response.text
    assert response.json()["status"] == "created"
    return session_id, body


# Each example builds two sessions through the API: no shrinking (minutes per failure);
# the failing example is printed whole.
ROUND_TRIP = settings(
    max_examples=10,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
    phases=(Phase.explicit, Phase.reuse, Phase.generate),
)


@ROUND_TRIP
@given(setup=SETUP, steps=st.lists(STEP, max_size=8))
async def test_round_trip_gives_the_same_context_bytes(
    servers: tuple[httpx.AsyncClient, httpx.AsyncClient], setup: dict[str, Any], steps: Any
) -> None:
    source, target = servers
    session_id, body = await moved(source, target, setup, steps)
    served, before = await contexts(target, session_id), await contexts(source, session_id)
    for after, original in zip(served, before, strict=True):
        assert after == original, difference(json.loads(after), json.loads(original))
    assert await export(target, session_id) == await export(source, session_id)
    path = f"/sessions/{session_id}"
    assert (await target.get(path)).content == (await source.get(path)).content
    history = f"{path}/summaries"
    assert (await target.get(history)).content == (await source.get(history)).content
    await read_context(target, session_id, max_tokens=1800, summarize="never")  # recorded
    again = await target.post("/sessions/import", content=body)
    assert again.status_code == 200 and again.json()["status"] == "unchanged"


@ROUND_TRIP
@given(setup=SETUP, steps=st.lists(STEP, max_size=6))
async def test_round_trip_across_databases(
    make_client: MakeClient, crossing: list[str], setup: dict[str, Any], steps: Any
) -> None:
    """Across databases the context is the same JSON (JSONB keeps its own key order, and
    an integral float as an integer), and the session's checksum is the same."""
    source, target = await serve_pair(make_client, *crossing)
    session_id, _ = await moved(source, target, setup, steps)
    served, before = await contexts(target, session_id), await contexts(source, session_id)
    for after, original in zip(served, before, strict=True):
        assert settled(after) == settled(original), difference(
            json.loads(after), json.loads(original)
        )
    exports = [lines(await export(c, session_id)) for c in (source, target)]
    for mine, theirs in zip(*exports, strict=True):
        assert transfer._settled(mine) == transfer._settled(theirs), difference(mine, theirs)


def difference(a: Any, b: Any, path: str = "") -> str:
    """Where two JSON values first differ, for a readable failure."""
    if isinstance(a, dict) and isinstance(b, dict):
        if list(a) != list(b):
            return f"{path}: keys {list(a)} != {list(b)}"
        for key in a:
            if a[key] != b[key]:
                return difference(a[key], b[key], f"{path}.{key}")
    if isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
        for i, (x, y) in enumerate(zip(a, b, strict=True)):
            if x != y or json.dumps(x) != json.dumps(y):
                return difference(x, y, f"{path}[{i}]")
    return f"{path}: {a!r:.300} != {b!r:.300}"


def settled(body: bytes) -> Any:
    return transfer._settled(json.loads(body))


class TestImport:
    async def test_refuses_an_export_cut_short(self, servers: Any) -> None:
        source, target = servers
        await build_session(source, "cut", [("chat", 2), ("fold", 0)])
        body = await export(source, "cut")
        for cut in (body[: len(body) // 2], body.rsplit(b"\n", 2)[0] + b"\n", b"", b"\n\n"):
            response = await target.post("/sessions/import", content=cut)
            assert_error(response, 422, "invalid_export")
        assert_error(await target.get("/sessions/cut"), 404, "session_not_found")

    async def test_refuses_records_that_do_not_match_their_checksum(self, servers: Any) -> None:
        source, target = servers
        await build_session(source, "forged", [("chat", 2)])
        records = lines(await export(source, "forged"))
        records[2]["content"] = "changed in transit"
        error = assert_error(
            await target.post("/sessions/import", content=jsonl(records)), 422, "invalid_export"
        )
        assert "checksum" in error["message"]

    @pytest.mark.parametrize(
        ("forge", "line"),
        [
            (lambda r: r[2].update(role="robot"), 3),
            (lambda r: r[2].update(content="nul \u0000 here"), 3),
            (lambda r: r[2].update(seq=r[1]["seq"]), 3),
            (lambda r: r[0].update(last_seq=1), 3),
            (lambda r: r.pop(2), None),
            (lambda r: r[0].update(summary_version=5), None),
            (lambda r: r[0].update(settings={"threshold": 7}), 1),
            (lambda r: r[0].update(id="bad id"), 1),
            (lambda r: r.insert(1, r[0]), 2),
            (lambda r: r[1].update(extra=1), 2),
        ],
    )
    async def test_refuses_a_sealed_export_the_api_could_not_have_made(
        self, servers: Any, forge: Any, line: int | None
    ) -> None:
        source, target = servers
        await build_session(source, "odd", [("chat", 2), ("fold", 0)])
        records = lines(await export(source, "odd"))
        forge(records)
        response = await target.post("/sessions/import", content=resealed(records))
        error = assert_error(response, 422, "invalid_export")
        if line is not None:
            assert error["details"]["line"] == line
        assert (await target.get("/sessions")).json()["sessions"] == []

    async def test_a_model_the_server_does_not_know_is_refused(self, servers: Any) -> None:
        source, target = servers
        await create_session(source, id="m")
        records = lines(await export(source, "m"))
        records[0]["model"] = "no-such-model"
        response = await target.post("/sessions/import", content=resealed(records))
        assert_error(response, 422, "unknown_model")

    async def test_the_calibration_travels_but_never_overwrites_one_learned(
        self, servers: Any
    ) -> None:
        source, target = servers
        await build_session(source, "cal", [("chat", 1), ("usage", 0)])
        body = await export(source, "cal")
        calibration = lines(body)[-2]
        assert calibration["kind"] == "calibration" and calibration["samples"] == 1
        await build_session(target, "own", [("chat", 2), ("usage", 0), ("usage", 0)])
        assert (await target.post("/sessions/import", content=body)).status_code == 201
        assert lines(await export(target, "cal"))[-2]["samples"] == 2  # the target's own
        # The tenant's calibration moves on: the session is still the same one.
        await build_session(source, "more", [("chat", 1), ("usage", 0)])
        again = await export(source, "cal")
        assert again != body and lines(again)[-1] == lines(body)[-1]
        response = await target.post("/sessions/import", content=again)
        assert response.status_code == 200 and response.json()["status"] == "unchanged"

    async def test_another_session_of_that_id_is_a_conflict(self, servers: Any) -> None:
        source, target = servers
        await build_session(source, "same-id", [("chat", 1)])
        await build_session(target, "same-id", [("chat", 2)])
        response = await target.post("/sessions/import", content=await export(source, "same-id"))
        assert_error(response, 409, "session_exists")

    async def test_the_same_messages_twice_on_one_server_is_a_conflict(
        self, make_client: MakeClient
    ) -> None:
        a, b = await two_tenants(make_client)
        await build_session(a, "shared", [("chat", 1)])
        response = await b.post("/sessions/import", content=await export(a, "shared"))
        assert_error(response, 409, "message_ids_taken")
        assert_error(await b.get("/sessions/shared"), 404, "session_not_found")


class TestRecords:
    def test_every_stored_column_travels(self) -> None:
        """A column added to a model without a field in its record fails here."""
        pairs: list[tuple[type[BaseModel], list[Any], set[str]]] = [
            (SessionRecord, transfer_rows.SESSION_COLUMNS, {"kind", "format", "id"}),
            (MessageRecord, transfer_rows.MESSAGE_COLUMNS, {"kind"}),
            (SummaryRecord, transfer_rows.SUMMARY_COLUMNS, {"kind"}),
        ]
        for record, columns, own in pairs:
            assert set(record.model_fields) - own == {column.name for column in columns}

    @given(value=st.floats(allow_nan=False, allow_infinity=False) | st.integers(-(2**70), 2**70))
    def test_the_checksum_reads_numbers_as_jsonb_gives_them_back(self, value: Any) -> None:
        """JSONB returns an integral float written with an exponent (1e+16) as an integer."""

        def checksum(content: Any) -> str:
            summed = transfer.Checksum()
            summed.add({"kind": "message", "content": {"n": [content]}})
            return str(summed.end()["checksum"])

        as_jsonb = json.loads(json.dumps(value).replace("e+", "e"))  # text JSONB would hold
        if isinstance(value, float) and value.is_integer() and abs(value) >= 1e16:
            as_jsonb = int(value)
        assert checksum(value) == checksum(as_jsonb)
        assert checksum(value) != checksum(f"{value}")


class TestExport:
    async def test_streams_the_session_in_order_across_pages(
        self, servers: Any, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """Pages and batches of 3 rows: export and import meet every page boundary."""
        client, target = servers
        monkeypatch.setattr(transfer, "PAGE_ROWS", 3)
        steps = [("chat", 3), ("fold", 0), ("tool", 50), ("fold", 0), ("chat", 2), ("fold", 0)]
        await build_session(client, "paged", steps)
        records = lines(await export(client, "paged"))
        kinds = [r["kind"] for r in records]
        assert kinds[0] == "session" and kinds[-1] == "end"
        seqs = [r["seq"] for r in records if r["kind"] == "message"]
        assert seqs == list(range(1, len(seqs) + 1)) and len(seqs) > 3
        versions = [r["version"] for r in records if r["kind"] == "summary"]
        summary = (await client.get("/sessions/paged")).json()["summary"]
        assert versions == list(range(1, summary["version"] + 1)) and len(versions) > 1
        summaries = ["summary"] * len(versions)
        assert kinds == ["session"] + ["message"] * len(seqs) + summaries + ["end"]
        stored = (await client.get("/sessions/paged/messages", params={"limit": 200})).json()
        assert [m["id"] for m in stored["messages"]] == [
            r["id"] for r in records if r["kind"] == "message"
        ]
        body = await export(client, "paged")
        assert (await target.post("/sessions/import", content=body)).status_code == 201
        assert await export(target, "paged") == body

    async def test_another_tenants_session_is_not_found(self, make_client: MakeClient) -> None:
        a, b = await two_tenants(make_client)
        await create_session(a, id="mine")
        assert_error(await b.get("/sessions/mine/export"), 404, "session_not_found")
        assert_error(await a.get("/sessions/nope/export"), 404, "session_not_found")


# Exports written here rather than built through the API (100k appends would take minutes):
# the records an export of a served session of `size` messages holds, sealed.
LONG_MODEL = "gpt-4.1"


def long_export(template: dict[str, Any], size: int, *, chain: int | None = None) -> bytes:
    """An export of `template`'s session holding `size` messages and a served context of
    them (a prefix chain of `chain` entries, by default one per message plus the head)."""
    tag = uuid.uuid4().hex[:8]
    entries = size + 1 if chain is None else chain
    served = {
        "estimated": 4 * size,
        "version": 0,
        "anchor": None,
        "settings": "0123456789abcdef",
        "limit": 1_000_000,
        "pruned": 0,
        "chain": [f"{n:016x}" for n in range(entries)],
        "through_seq": size,
    }
    session = {**template, "last_seq": size, "live_tokens": 4 * size}
    session["last_context"] = {LONG_MODEL: served}
    messages = [
        {
            "kind": "message",
            "id": f"{tag}-{seq}",
            "seq": seq,
            "role": "user" if seq % 2 else "assistant",
            "content": f"m{seq}",
            "name": None,
            "tool_calls": None,
            "tool_call_id": None,
            "metadata": {},
            "token_count": 4,
            "client_id": None,
            "created_at": template["created_at"],
        }
        for seq in range(1, size + 1)
    ]
    return resealed([session, *messages])


async def session_template(client: httpx.AsyncClient, session_id: str) -> dict[str, Any]:
    """The session record of an empty session of that id, as this server exports it."""
    await create_session(client, id=session_id, model=LONG_MODEL)
    record = lines(await export(client, session_id))[0]
    assert (await client.delete(f"/sessions/{session_id}")).status_code == 204
    return record


def without_times(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Records as compared across an import: the timestamps as instants (a database writes
    its own form of the same time), every JSON value as JSONB gives it back."""
    out = []
    for record in records:
        record = dict(record)
        for key in ("created_at", "updated_at"):
            if key in record:
                record[key] = datetime.fromisoformat(record[key]).replace(tzinfo=None)
        out.append(transfer._settled(record))
    return out


# Few examples: random sessions past the 2,000-entry cap the chain once hit, and the size an
# issue reported (30,000 messages, the largest that is quick enough to store here).
LONG_EXPORTS = settings(
    max_examples=3,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
    phases=(Phase.explicit, Phase.generate),
)


@LONG_EXPORTS
@given(size=st.integers(min_value=0, max_value=2_500))
@example(size=30_000)
async def test_an_export_of_any_size_imports_and_exports_the_same(
    make_client: MakeClient, size: int
) -> None:
    """A served session's prefix chain has an entry per message (tens of thousands for a
    long session): its export imports back (issue: `…chain has more than 2000 entries`), and
    exports again as the same records."""
    client = await make_client(max_body_bytes=64 << 20)
    session_id = f"long-{uuid.uuid4().hex[:12]}"
    body = long_export(await session_template(client, session_id), size)
    response = await client.post("/sessions/import", content=body)
    assert response.status_code == 201, response.text[:300]
    assert response.json()["messages"] == size
    assert without_times(lines(await export(client, session_id))) == without_times(lines(body))


async def test_the_import_checks_take_an_export_of_100k_messages(
    client: httpx.AsyncClient,
) -> None:
    """Up to 100,000 messages, checked as an import reads them (what refused the chain),
    without storing them (that is the same per message as above)."""
    body = long_export(await session_template(client, "largest"), 100_000)

    async def body_lines() -> AsyncIterator[bytes]:
        for line in body.splitlines():
            yield line

    kinds = [type(record).__name__ async for _, record in transfer._checked_records(body_lines())]
    assert len(kinds) == 100_002 and kinds[-1] == "EndRecord"


class TestServedChains:
    """The chain's bound scales with the session: no longer than its messages can render
    to, of fingerprints only; everything else in last_context keeps the generic caps."""

    async def test_a_chain_longer_than_the_messages_make_is_refused(
        self, client: httpx.AsyncClient
    ) -> None:
        template = await session_template(client, "forged")
        room = CHAIN_HEAD + 10 * chain_elements("m", None)
        fits = long_export(template, 10, chain=room)
        assert (await client.post("/sessions/import", content=fits)).status_code == 201
        assert (await client.delete("/sessions/forged")).status_code == 204
        body = long_export(template, 10, chain=room + 1)
        error = assert_error(
            await client.post("/sessions/import", content=body), 422, "invalid_export"
        )
        assert "chain" in error["message"] and error["details"]["line"] == 1
        assert_error(await client.get("/sessions/forged"), 404, "session_not_found")

    async def test_a_removed_message_leaves_room_for_what_it_rendered(
        self, client: httpx.AsyncClient
    ) -> None:
        records = lines(long_export(await session_template(client, "removed"), 10))
        records[0].update(last_seq=11, removed_count=1, live_removed=1)
        records[0]["last_context"][LONG_MODEL]["chain"] += ["ab"] * 2000
        response = await client.post("/sessions/import", content=resealed(records))
        assert response.status_code == 201, response.text

    @pytest.mark.parametrize(
        "served",
        [
            {LONG_MODEL: {"chain": ["not hex"]}},
            {LONG_MODEL: {"chain": [1]}},
            {LONG_MODEL: {"chain": [], "other": list(range(2001))}},
            {f"m{n}": {} for n in range(2001)},
        ],
    )
    async def test_anything_else_in_last_context_keeps_its_caps(
        self, client: httpx.AsyncClient, served: dict[str, Any]
    ) -> None:
        records = lines(long_export(await session_template(client, "capped"), 2))
        records[0]["last_context"] = served
        response = await client.post("/sessions/import", content=resealed(records))
        error = assert_error(response, 422, "invalid_export")
        assert error["details"]["line"] == 1 and "last_context" in error["message"]
