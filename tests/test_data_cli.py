"""`foldwise export | import | purge | copy` on real databases (both kinds), run as a user
runs them: `main([...])` with FOLDWISE_DATABASE_URL."""

from __future__ import annotations

import asyncio
import json
import shutil
from collections.abc import Awaitable, Callable, Iterator
from datetime import timedelta
from pathlib import Path
from typing import Any

import httpx
import pytest
from sqlalchemy import delete, update

from app.cli import main
from app.core import settings as settings_module
from app.main import create_app
from app.models import Message, Session
from app.models.base import utcnow
from tests.support.apps import make_settings
from tests.support.session_builder import build_session, idle_since

STEPS = [("chat", 2), ("tool", 200), ("fold", 0), ("openai", 2), ("chat", 1)]


def on_server(url: str, work: Callable[[httpx.AsyncClient, Any], Awaitable[Any]]) -> Any:
    """Run `work(client, app)` against an app on `url`."""

    async def run() -> Any:
        app = create_app(make_settings(url, retention_sweep_s=0))
        async with app.router.lifespan_context(app):
            transport = httpx.ASGITransport(app=app)
            async with httpx.AsyncClient(transport=transport, base_url="http://t") as client:
                return await work(client, app)

    return asyncio.run(run())


def contexts(url: str, *session_ids: str) -> list[Any]:
    async def read(client: httpx.AsyncClient, _: Any) -> list[Any]:
        bodies = []
        for sid in session_ids:
            response = await client.get(f"/sessions/{sid}/context", params={"max_tokens": 2500})
            assert response.status_code == 200, response.text
            bodies.append(response.json())
        return bodies

    result: list[Any] = on_server(url, read)
    return result


@pytest.fixture
def use_database(monkeypatch: pytest.MonkeyPatch) -> Iterator[Callable[[str], None]]:
    def use(url: str) -> None:
        monkeypatch.setenv("FOLDWISE_DATABASE_URL", url)
        settings_module.get_settings.cache_clear()

    yield use
    settings_module.get_settings.cache_clear()


@pytest.fixture
def sqlite_copy(sqlite_template: Path, tmp_path: Path) -> Callable[[str], str]:
    def fresh(name: str) -> str:
        shutil.copyfile(sqlite_template, tmp_path / f"{name}.db")
        return f"sqlite:///{tmp_path / name}.db"

    return fresh


def sessions(url: str, *names: str, steps: Any = STEPS) -> None:
    async def build(client: httpx.AsyncClient, _: Any) -> None:
        for name in names:
            await build_session(client, name, steps)

    on_server(url, build)


class TestExportImport:
    def test_a_session_moves_through_a_file(
        self,
        db_url: str,
        sqlite_copy: Callable[[str], str],
        use_database: Callable[[str], None],
        tmp_path: Path,
        capsys: pytest.CaptureFixture[str],
    ) -> None:
        sessions(db_url, "moving")
        contexts(db_url, "moving")  # served once: its record travels too
        use_database(db_url)
        assert main(["export", "moving", "-o", str(tmp_path / "moving.jsonl")]) == 0
        target = sqlite_copy("target")
        use_database(target)
        for status in ("created", "unchanged"):
            assert main(["import", str(tmp_path / "moving.jsonl")]) == 0
            assert json.loads(capsys.readouterr().out)["status"] == status
        assert contexts(target, "moving") == contexts(db_url, "moving")

    def test_errors_are_one_clean_line(
        self,
        db_url: str,
        use_database: Callable[[str], None],
        tmp_path: Path,
        capsys: pytest.CaptureFixture[str],
    ) -> None:
        use_database(db_url)
        assert main(["export", "missing", "-o", str(tmp_path / "x.jsonl")]) == 2
        assert "session_not_found" in capsys.readouterr().err
        (tmp_path / "bad.jsonl").write_text('{"kind": "session"}\n')
        assert main(["import", str(tmp_path / "bad.jsonl")]) == 2
        assert "invalid_export" in capsys.readouterr().err


class TestPurge:
    def test_older_than_deletes_idle_sessions_and_dry_run_counts(
        self, db_url: str, use_database: Callable[[str], None], capsys: pytest.CaptureFixture[str]
    ) -> None:
        sessions(db_url, "old", "recent", steps=[("chat", 1)])

        async def age(_: httpx.AsyncClient, app: Any) -> None:
            await idle_since(app, "old", utcnow() - timedelta(days=31))
            await idle_since(app, "recent", utcnow() - timedelta(days=29))

        on_server(db_url, age)
        use_database(db_url)
        assert main(["purge", "--older-than", "30d", "--dry-run"]) == 0
        assert capsys.readouterr().out.strip() == "would delete 1 sessions (3 messages)"
        assert main(["purge", "--older-than", "30d"]) == 0
        assert capsys.readouterr().out.strip() == "deleted 1 sessions (3 messages)"
        assert [c["session_id"] for c in contexts(db_url, "recent")] == ["recent"]

    def test_prefix_deletes_one_tenants_sessions(
        self, db_url: str, use_database: Callable[[str], None], capsys: pytest.CaptureFixture[str]
    ) -> None:
        sessions(db_url, "u1:a", "u1:b", "u2:a", steps=[])
        use_database(db_url)
        assert main(["purge", "--prefix", "u1:"]) == 2
        assert "--tenant" in capsys.readouterr().err
        assert main(["purge", "--prefix", "u1:", "--tenant", "other"]) == 0
        assert "deleted 0 sessions" in capsys.readouterr().out
        assert main(["purge", "--prefix", "u1:", "--tenant", "default"]) == 0
        assert "deleted 2 sessions" in capsys.readouterr().out

    @pytest.mark.parametrize("bad", ["30", "d", "-1d", "1w"])
    def test_a_duration_is_days_hours_or_minutes(
        self, bad: str, capsys: pytest.CaptureFixture[str]
    ) -> None:
        with pytest.raises(SystemExit):
            main(["purge", f"--older-than={bad}"])
        assert "is not a duration" in capsys.readouterr().err


class TestCopy:
    def test_copies_verifies_and_resumes(
        self,
        db_url: str,
        sqlite_copy: Callable[[str], str],
        capsys: pytest.CaptureFixture[str],
    ) -> None:
        """From a SQLite file to the test database (PostgreSQL in its run)."""
        source = sqlite_copy("source")
        names = [f"s{n}" for n in range(4)]
        sessions(source, *names)
        assert main(["copy", "--from", source, "--to", db_url]) == 0
        out = capsys.readouterr().out
        assert "copied 4 sessions" in out and "4 verified" in out
        assert contexts(db_url, *names) == contexts(source, *names)

        async def cut_short(_: httpx.AsyncClient, app: Any) -> None:  # as a crash would
            async with app.state.engine.begin() as connection:
                pk = select_pk(names[-1])
                await connection.execute(
                    delete(Message).where(Message.session_id == pk, Message.seq > 3)
                )

        on_server(db_url, cut_short)
        assert main(["copy", "--from", source, "--to", db_url]) == 0
        assert "4 verified" in capsys.readouterr().out
        assert contexts(db_url, *names) == contexts(source, *names)

        async def tamper(_: httpx.AsyncClient, app: Any) -> None:
            async with app.state.engine.begin() as connection:
                stmt = update(Message).where(
                    Message.session_id == select_pk("s1"), Message.seq == 1
                )
                await connection.execute(stmt.values(content="changed"))

        on_server(db_url, tamper)
        assert main(["copy", "--from", source, "--to", db_url]) == 1
        assert "default/s1: counts or checksum differ" in capsys.readouterr().err


def select_pk(session_id: str) -> Any:
    from sqlalchemy import select

    return select(Session.pk).where(Session.external_id == session_id).scalar_subquery()
