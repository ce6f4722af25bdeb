"""What `foldwise` says when it cannot start: one line naming the cause and the fix.

A start-up failure is almost always configuration: the database URL, the database or role
it names, the schema revision. `explain` turns the exception into that line (the URL shown
without its password), or None for a failure it does not know, which keeps its traceback.
"""

from __future__ import annotations

import functools

from sqlalchemy import make_url
from sqlalchemy.engine import URL
from sqlalchemy.exc import ArgumentError, DBAPIError
from sqlalchemy.ext.asyncio import AsyncEngine

from app.core.db import alembic_config
from app.core.logging import get_logger

log = get_logger("foldwise.startup")

URL_FORMS = "sqlite:///path.db or postgresql://user:password@host:5432/database"
# PostgreSQL error codes (SQLSTATE) met at connect time.
_MISSING_DATABASE = "3D000"
_MISSING_ROLE = "28000"
_WRONG_PASSWORD = "28P01"


class MigrationNeeded(RuntimeError):
    """The database's schema is not the one this Foldwise was written for."""


@functools.cache
def head_revision() -> str:
    from alembic.script import ScriptDirectory

    head = ScriptDirectory.from_config(alembic_config("sqlite://")).get_current_head()
    assert head is not None, "no migration scripts found"
    return head


async def check_schema(engine: AsyncEngine) -> None:
    """MigrationNeeded unless the database is at the latest schema revision: an app started
    without `foldwise serve` (which migrates first), e.g. by `uvicorn --factory`, says so at
    start instead of failing its first requests."""
    from alembic.runtime.migration import MigrationContext

    try:
        async with engine.connect() as connection:
            current = await connection.run_sync(
                lambda sync: MigrationContext.configure(sync).get_current_revision()
            )
    except (DBAPIError, OSError) as exc:
        # Unreachable now: the service starts anyway (/readyz and requests answer 503 until
        # the database is back), as it would if the database went away later.
        log.warning("database unreachable at start, schema not checked: %s", type(exc).__name__)
        return
    if current != head_revision():
        shown = engine.url.render_as_string(hide_password=True)
        raise MigrationNeeded(
            f"the database at {shown} is at schema revision {current or 'none (empty)'}, this "
            f"Foldwise needs {head_revision()}: run `foldwise migrate` (`foldwise serve` "
            "migrates by itself)"
        )


def _url(raw: str) -> URL | None:
    try:
        return make_url(raw.strip())
    except (ArgumentError, ValueError):
        return None


def _server(url: URL) -> str:
    return f"{url.host or 'localhost'}:{url.port or 5432}"


def explain(exc: BaseException, database_url: str) -> str | None:
    """One actionable line for a start-up failure against `database_url`, or None."""
    url = _url(database_url)
    if url is None or isinstance(exc, ArgumentError):
        return f"FOLDWISE_DATABASE_URL is not a database URL: use {URL_FORMS}"
    shown = url.render_as_string(hide_password=True)
    if isinstance(exc, DBAPIError):
        return _database_error(exc, url, shown)
    if "Can't locate revision" in str(exc):  # alembic: a newer Foldwise migrated this database
        return (
            f"the database at {shown} was migrated by a newer Foldwise (its schema revision is "
            "unknown to this one): run that version, or point FOLDWISE_DATABASE_URL elsewhere"
        )
    if isinstance(exc, OSError) and url.get_backend_name() == "postgresql":
        return (
            f"cannot connect to PostgreSQL at {_server(url)} ({exc.strerror or type(exc).__name__}"
            "): start it, or fix the host and port in FOLDWISE_DATABASE_URL"
        )
    return None


def _database_error(exc: DBAPIError, url: URL, shown: str) -> str | None:
    code = getattr(exc.orig, "sqlstate", None)
    if code == _MISSING_DATABASE:
        return (
            f"database {url.database!r} does not exist on {_server(url)}: create it "
            f"(createdb -h {url.host} -p {url.port or 5432} -U {url.username} {url.database}) "
            "or fix the database name in FOLDWISE_DATABASE_URL"
        )
    if code == _MISSING_ROLE:
        return (
            f"role {url.username!r} does not exist on {_server(url)}: create it "
            f"(createuser -h {url.host} -p {url.port or 5432} {url.username}) "
            "or fix the user in FOLDWISE_DATABASE_URL"
        )
    if code == _WRONG_PASSWORD:
        return (
            f"PostgreSQL at {_server(url)} refused the password of {url.username!r}: "
            "fix the password in FOLDWISE_DATABASE_URL"
        )
    if url.get_backend_name() == "sqlite" and "unable to open database file" in str(exc.orig):
        return (
            f"cannot open the SQLite file {url.database!r} ({shown}): its directory must "
            "exist and be writable; create it or fix FOLDWISE_DATABASE_URL"
        )
    return None
