"""Schemathesis over /openapi.json against a real `foldwise serve`, bounded: SQLite and
PostgreSQL, open and with keys. Every check runs: fails on any 5xx, a status, content type,
header or body the schema does not document, invalid input accepted (an unknown query key
included), a 405 without `Allow`, a deleted resource still served, and any request that hangs
(per-request timeout, and a timeout on the whole run)."""

from __future__ import annotations

import os
import subprocess
import uuid
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.support.databases import create_postgres_database, drop_postgres_database
from tests.support.servers import ROOT, Server

SCHEMATHESIS = ROOT / ".venv" / "bin" / "schemathesis"
# Examples per operation and phase: ~2,000 requests a run, under a minute on 2 cores.
MAX_EXAMPLES = "40"
REQUEST_TIMEOUT_S = "15"  # a request slower than this is a hang (the server's deadline is 60)
RUN_TIMEOUT_S = 240
KEY = "schemathesis-key"
# Every check, with three answers the schema cannot express made explicit:
# - a schema-valid request may still be refused 422 by a rule of its own: an unknown model, a
#   message a provider would reject, a cursor the server did not issue;
# - a schema-violating body over FOLDWISE_MAX_BODY_BYTES is refused 413 before it is read;
# - `DELETE …/messages/last` on a session without messages is 404 `no_messages` (documented),
#   which is not a created session going missing;
# - the URL /sessions/import is also /sessions/{session_id} for a session named "import", whose
#   GET, PATCH and DELETE are real: a 405 there rightly lists them in `Allow` beside POST.
CONFIG = """
[checks.positive_data_acceptance]
expected-statuses = ["2xx", "401", "404", "409", "422"]

[checks.negative_data_rejection]
expected-statuses = ["400", "401", "403", "404", "405", "406", "409", "413", "415", "422"]

[[operations]]
include-path = "/sessions/{session_id}/messages/last"
checks.ensure_resource_availability.enabled = false

[[operations]]
include-path = "/sessions/import"
checks.allow_header_conformance.enabled = false
"""

pytestmark = pytest.mark.slow


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def database(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    if request.param == "sqlite":
        yield f"sqlite:///{tmp_path / 'fuzz.db'}"
        return
    name = f"foldwise_fuzz_{uuid.uuid4().hex[:12]}"
    url = create_postgres_database(name)
    try:
        yield url
    finally:
        drop_postgres_database(name)


@pytest.mark.parametrize("keys", [False, True], ids=["open", "keys"])
def test_no_5xx_no_hang_no_schema_violation(database: str, keys: bool, tmp_path: Path) -> None:
    env = {"FOLDWISE_API_KEYS": f"fuzz:{KEY}"} if keys else {}
    server = Server(database, tmp_path, **env).start()
    config = tmp_path / "schemathesis.toml"
    config.write_text(CONFIG)
    try:
        command = [
            str(SCHEMATHESIS),
            "--config-file",
            str(config),
            "run",
            f"{server.base_url}/openapi.json",
            # No --checks: every check runs (the default), as narrowed by CONFIG for one
            # operation (`--checks all` would override that).
            "--phases",
            "coverage,fuzzing,stateful",
            "--max-examples",
            MAX_EXAMPLES,
            "--request-timeout",
            REQUEST_TIMEOUT_S,
            "--generation-allow-x00",
            "true",
            "--seed",
            "20261123",
            "--no-color",
        ]
        if keys:
            command += ["--header", f"Authorization: Bearer {KEY}"]
        # JSONL bodies (POST /sessions/import) go out as text (tests/hostile/schemathesis_hooks.py)
        hooks = {"SCHEMATHESIS_HOOKS": "tests.hostile.schemathesis_hooks", "PYTHONPATH": str(ROOT)}
        run = subprocess.run(
            command,
            capture_output=True,
            text=True,
            timeout=RUN_TIMEOUT_S,
            cwd=tmp_path,
            env={**os.environ, **hooks},
        )
        assert run.returncode == 0, run.stdout[-6000:] + run.stderr[-2000:]
        assert httpx.get(f"{server.base_url}/healthz", timeout=5).status_code == 200
    finally:
        server.stop()
