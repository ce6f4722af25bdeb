"""DELETE /sessions/{id} and DELETE /sessions?id_prefix=…: every row of a session goes, in
one transaction, on both databases; other sessions and tenants keep theirs."""

from __future__ import annotations

import json
from typing import Any

import httpx
from fastapi import FastAPI
from sqlalchemy import Table, select

from app.main import create_app
from app.models import Base
from tests.support.apps import MakeClient, make_settings
from tests.support.factories import assert_error, create_session
from tests.support.session_builder import build_session, two_tenants

STEPS = [("chat", 2), ("tool", 300), ("fold", 0), ("openai", 3), ("usage", 0), ("clear", 0)]
STEPS += [("chat", 1), ("patch", 0), ("read", 0)]


async def every_row(app: FastAPI) -> dict[str, list[dict[str, Any]]]:
    """Every row of every table the models declare."""
    tables: dict[str, list[dict[str, Any]]] = {}
    async with app.state.engine.connect() as connection:
        for table in Base.metadata.sorted_tables:
            result = await connection.execute(select(table))
            tables[table.name] = [dict(row) for row in result.mappings()]
    return tables


def session_keys(table: Table) -> list[str]:
    """The columns of `table` that point at a session."""
    return [fk.parent.name for fk in table.foreign_keys if fk.column.table.name == "sessions"]


class TestDeleteSession:
    async def test_no_row_of_the_session_remains_in_any_table(
        self, make_client: MakeClient, db_url: str
    ) -> None:
        app = create_app(make_settings(db_url))
        client = await make_client(app)
        await build_session(client, "doomed", STEPS, marker="MARK-doomed")
        await build_session(client, "kept", STEPS, marker="MARK-kept")
        before = await every_row(app)
        doomed = next(r["pk"] for r in before["sessions"] if r["external_id"] == "doomed")
        assert any(r["session_id"] == doomed for r in before["messages"])
        assert any(r["session_id"] == doomed for r in before["summaries"])

        assert (await client.delete("/sessions/doomed")).status_code == 204

        after = await every_row(app)
        for table in Base.metadata.sorted_tables:
            rows = after[table.name]
            if table.name == "sessions":
                assert [r["external_id"] for r in rows] == ["kept"]
            for key in session_keys(table):
                assert not [r for r in rows if r[key] == doomed], table.name
            text = json.dumps(rows, default=str)
            assert "MARK-doomed" not in text and "doomed" not in text, table.name
        # The other session is whole.
        for name in ("messages", "summaries"):
            kept = [r for r in before[name] if r["session_id"] != doomed]
            assert after[name] == kept and kept
        assert after["calibrations"] == before["calibrations"]  # the tenant's, not the session's
        assert_error(await client.get("/sessions/doomed"), 404, "session_not_found")
        # The context this replica served last (STEPS ends with a read) is not served again.
        served = await client.get("/sessions/doomed/context", params={"max_tokens": 2500})
        assert_error(served, 404, "session_not_found")
        assert_error(await client.get("/sessions/doomed/export"), 404, "session_not_found")

    async def test_a_deleted_id_can_be_created_afresh(self, client: httpx.AsyncClient) -> None:
        await build_session(client, "again", [("chat", 1), ("fold", 0)])
        assert (await client.delete("/sessions/again")).status_code == 204
        fresh = await create_session(client, id="again")
        assert fresh["message_count"] == 0 and fresh["summary"] is None


class TestDeleteByPrefix:
    async def test_deletes_the_tenants_sessions_with_the_prefix_only(
        self, make_client: MakeClient
    ) -> None:
        a, b = await two_tenants(make_client)
        for client in (a, b):
            for sid in ("user-1:chat", "user-1:code", "user-10:chat", "user-2:chat"):
                await build_session(client, sid, [("chat", 1)])
        response = await a.delete("/sessions", params={"id_prefix": "user-1:"})
        assert response.status_code == 200 and response.json() == {"deleted": 2}
        left = (await a.get("/sessions")).json()["sessions"]
        assert sorted(s["id"] for s in left) == ["user-10:chat", "user-2:chat"]
        assert len((await b.get("/sessions")).json()["sessions"]) == 4
        again = await a.delete("/sessions", params={"id_prefix": "user-1:"})
        assert again.json() == {"deleted": 0}

    async def test_a_prefix_is_required_and_well_formed(self, client: httpx.AsyncClient) -> None:
        await create_session(client, id="kept")
        assert_error(await client.delete("/sessions"), 422, "validation_error")
        for bad in ("", "%", "a b", "x" * 300):
            response = await client.delete("/sessions", params={"id_prefix": bad})
            assert_error(response, 422, "validation_error")
        assert (await client.get("/sessions/kept")).status_code == 200
