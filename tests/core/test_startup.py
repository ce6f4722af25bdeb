"""Every start-up failure of the real `foldwise` command is one line that says what to do, and
exit status 2 (app/core/startup.py, app/cli.py)."""

from __future__ import annotations

import asyncio
import os
import sqlite3
import subprocess
import uuid
from pathlib import Path

import pytest
from sqlalchemy import make_url

from app.core.db import upgrade_database
from tests.support.servers import FOLDWISE, Server, free_port

PG = pytest.mark.postgres


def run(tmp_path: Path, *args: str, **env: str) -> str:
    """`foldwise ARGS` in an empty directory; asserts exit 2 and one line saying why (after
    the log records of what ran before, if any); returns it."""
    clean = {k: v for k, v in os.environ.items() if not k.startswith(("FOLDWISE_", "ANTHROPIC_"))}
    done = subprocess.run(
        [str(FOLDWISE), *args],
        cwd=tmp_path,
        env={**clean, "FOLDWISE_DATABASE_URL": f"sqlite:///{tmp_path / 'f.db'}", **env},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 2, done.stderr
    *logged, line = done.stderr.splitlines()
    # Log records of what ran first (an open-mode WARNING may come before the failure).
    assert all(" INFO " in r or " WARNING " in r for r in logged), done.stderr
    assert line.startswith("foldwise") and "Traceback" not in done.stderr
    return line


@pytest.mark.parametrize(
    ("url", "says"),
    [
        ("postgresql://u@h:port/db", "is not a database URL: use sqlite:///path.db or postgresql"),
        ("foo:://bar", "is not a database URL"),
        ("mysql://u@h/db", "unsupported database 'mysql'"),
        ("sqlite:////nonexistent/dir/f.db", "directory must exist and be writable"),
        ("postgresql://u:pw@127.0.0.1:1/db", "cannot connect to PostgreSQL at 127.0.0.1:1"),
    ],
)
def test_a_bad_database_url(tmp_path: Path, url: str, says: str) -> None:
    line = run(tmp_path, "migrate", FOLDWISE_DATABASE_URL=url)
    assert says in line and "pw" not in line


@pytest.mark.parametrize("port", ["8000000", "0", "-1", "http"])
def test_a_port_out_of_range(tmp_path: Path, port: str) -> None:
    line = run(tmp_path, "serve", "--port", port)
    assert "port must be a number from 1 to 65535" in line and "--help" in line


def test_an_invalid_setting_is_named_as_its_variable(tmp_path: Path) -> None:
    line = run(tmp_path, "migrate", FOLDWISE_LOG_FORMAT="xml")
    assert line.startswith("foldwise: FOLDWISE_LOG_FORMAT: ")


def test_a_database_migrated_by_a_newer_version(tmp_path: Path) -> None:
    database = tmp_path / "f.db"
    upgrade_database(f"sqlite:///{database}")
    with sqlite3.connect(database) as connection:
        connection.execute("UPDATE alembic_version SET version_num = '9999'")
    assert "migrated by a newer Foldwise" in run(tmp_path, "serve")


@PG
def test_a_missing_postgres_database(tmp_path: Path, postgres_database: str) -> None:
    url = make_url(postgres_database).set(database=f"missing_{uuid.uuid4().hex[:8]}")
    line = run(tmp_path, "serve", FOLDWISE_DATABASE_URL=url.render_as_string(False))
    assert f"database '{url.database}' does not exist" in line and "createdb" in line


@PG
def test_a_missing_postgres_role(tmp_path: Path, postgres_database: str) -> None:
    url = make_url(postgres_database).set(username=f"nobody_{uuid.uuid4().hex[:8]}")
    line = run(tmp_path, "migrate", FOLDWISE_DATABASE_URL=url.render_as_string(False))
    assert f"role '{url.username}' does not exist" in line and "createuser" in line


def test_demo_against_a_keyed_server_names_the_key_options(tmp_path: Path) -> None:
    server = Server(f"sqlite:///{tmp_path / 'keyed.db'}", tmp_path, FOLDWISE_API_KEYS="t:k").start()
    try:
        line = run(tmp_path, "demo", "--url", server.base_url)
    finally:
        server.stop()
    assert "needs an API key: pass --key <key> or set FOLDWISE_DEMO_KEY" in line


def test_help_describes_every_option_with_its_default() -> None:
    def help_text(*args: str) -> str:
        done = subprocess.run([str(FOLDWISE), *args, "--help"], capture_output=True, text=True)
        return " ".join(done.stdout.split())

    serve = help_text("serve")
    for default in ("--host HOST address", "(default: 127.0.0.1)", "(default: 8000)"):
        assert default in serve
    assert "(default: http://127.0.0.1:8000)" in help_text("demo")
    assert "--model MODEL model whose tokenizer counts" in help_text("count")
    assert "(default: auto)" in help_text("summarize")


async def test_an_app_on_an_unmigrated_database_says_to_migrate(tmp_path: Path) -> None:
    from app.core.startup import MigrationNeeded, head_revision
    from app.main import create_app
    from tests.support.apps import make_settings

    app = create_app(make_settings(f"sqlite:///{tmp_path / 'empty.db'}"))
    with pytest.raises(MigrationNeeded, match="run `foldwise migrate`") as raised:
        async with app.router.lifespan_context(app):
            pass
    assert "revision none (empty)" in str(raised.value) and head_revision() in str(raised.value)
    await asyncio.to_thread(upgrade_database, f"sqlite:///{tmp_path / 'empty.db'}")
    async with app.router.lifespan_context(app):  # migrated: it starts
        pass


BAD_TEMPLATES = {
    "missing": None,
    "unknown placeholder": "{previous_summary}\n{transcript}\n{summary}",
    "no previous summary": "Summarize:\n{transcript}",
    "too large": "{previous_summary}{transcript}" + "x" * 20_000,
}


def refused(tmp_path: Path, template: str | None, *args: str) -> str:
    """`foldwise ARGS` with FOLDWISE_SUMMARIZER_TEMPLATE at a bad file: exit 2 and one line on
    stderr, nothing else; returns it."""
    path = tmp_path / "fold.txt"
    if template is not None:
        path.write_text(template, "utf-8")
    clean = {k: v for k, v in os.environ.items() if not k.startswith(("FOLDWISE_", "ANTHROPIC_"))}
    env = {
        **clean,
        "FOLDWISE_DATABASE_URL": f"sqlite:///{tmp_path / 'f.db'}",
        "FOLDWISE_SUMMARIZER_TEMPLATE": str(path),
        "ANTHROPIC_API_KEY": "sk-ant-test-0000000000000000000000",
    }
    done = subprocess.run(
        [str(FOLDWISE), *args], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 2, done.stderr
    assert len(done.stderr.splitlines()) == 1, done.stderr
    assert done.stderr.startswith(f"foldwise: FOLDWISE_SUMMARIZER_TEMPLATE '{path}': ")
    return done.stderr


@pytest.mark.parametrize("workers", ["1", "2"])
@pytest.mark.parametrize("kind", BAD_TEMPLATES)
def test_serve_refuses_a_bad_summarizer_template(tmp_path: Path, kind: str, workers: str) -> None:
    port = str(free_port())
    refused(tmp_path, BAD_TEMPLATES[kind], "serve", "--port", port, "--workers", workers)
    assert not (tmp_path / "f.db").exists()  # refused before migrating


def test_summarize_refuses_a_bad_summarizer_template(tmp_path: Path) -> None:
    (tmp_path / "t.json").write_text('[{"role": "user", "content": "hi"}]')
    line = refused(tmp_path, "{transcript}", "summarize", "--strategy", "llm", "t.json")
    assert "{previous_summary} is missing" in line


def test_an_app_with_a_bad_summarizer_template_is_not_built(tmp_path: Path) -> None:
    """`uvicorn --factory` and each `serve --workers N` process build the app: it checks too."""
    from app.main import create_app
    from app.summarizers.template import TemplateError, _instructions
    from tests.support.apps import make_settings

    path = tmp_path / "fold.txt"
    path.write_text("{previous_summary}{transcript}{0}")
    settings = make_settings(f"sqlite:///{tmp_path / 'f.db'}", summarizer_template=str(path))
    _instructions.cache_clear()
    with pytest.raises(TemplateError, match="positional placeholder"):
        create_app(settings)


def test_serve_starts_with_a_good_summarizer_template(tmp_path: Path) -> None:
    template = tmp_path / "fold.txt"
    template.write_text("<previous_summary>{previous_summary}</previous_summary>\n{transcript}")
    server = Server(
        f"sqlite:///{tmp_path / 'f.db'}", tmp_path, FOLDWISE_SUMMARIZER_TEMPLATE=str(template)
    )
    try:
        server.start()  # ready, or raises with the server's log
    finally:
        server.stop()
