"""The TypeScript client (clients/typescript): `npm ci` from its lockfile, its checks (the
committed types match this server's OpenAPI schema, the committed dist/ matches src/, typed
usage compiles against dist/*.d.ts), and its `node --test` suite against a real
`foldwise serve` on SQLite and on PostgreSQL.

Needs Node.js 20+ and npm: skipped without them on a laptop, failed in CI (`CI` set)."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any, NoReturn

import pytest

from tests.support.servers import ROOT

PACKAGE = ROOT / "clients" / "typescript"
NODE_MAJOR = 20
INSTALL_TIMEOUT_S = 300
# The node suite: ~40 tests, a server start and an `npm install` of the example (~15 s).
SUITE_TIMEOUT_S = 300

pytestmark = pytest.mark.slow


def _missing(reason: str) -> NoReturn:
    message = f"the TypeScript client's tests need Node.js {NODE_MAJOR}+ and npm: {reason}"
    if os.environ.get("CI"):
        pytest.fail(message)
    pytest.skip(message)


def _run(command: list[str], env: dict[str, str] | None = None, timeout: float = 120) -> str:
    """Runs `command` in the package; fails the test with its output when it fails."""
    done = subprocess.run(
        command,
        cwd=PACKAGE,
        env={**os.environ, **(env or {})},
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )
    output = done.stdout + done.stderr
    if done.returncode != 0:
        pytest.fail(f"{' '.join(command)} exited {done.returncode}:\n{output[-6000:]}")
    return output


@pytest.fixture(scope="module")
def npm() -> Iterator[str]:
    """npm, with node_modules installed exactly from package-lock.json (`npm ci`, once)."""
    node, npm = shutil.which("node"), shutil.which("npm")
    if node is None or npm is None:
        _missing("node or npm is not on PATH")
    version = subprocess.run([node, "--version"], capture_output=True, text=True, check=True)
    if int(version.stdout.strip().lstrip("v").split(".")[0]) < NODE_MAJOR:
        _missing(f"found {version.stdout.strip()}")
    installed = PACKAGE / "node_modules" / ".package-lock.json"
    lock = PACKAGE / "package-lock.json"
    if not installed.exists() or installed.stat().st_mtime < lock.stat().st_mtime:
        _run([npm, "ci", "--prefer-offline", "--no-audit", "--no-fund"], timeout=INSTALL_TIMEOUT_S)
    yield npm


def _walk(value: Any) -> Iterator[tuple[str, Any]]:
    if isinstance(value, dict):
        for key, item in value.items():
            yield key, item
            yield from _walk(item)
    elif isinstance(value, list):
        for item in value:
            yield from _walk(item)


def test_lockfile_has_no_registry_addresses() -> None:
    lock = json.loads((PACKAGE / "package-lock.json").read_text())
    resolved = [item for key, item in _walk(lock) if key == "resolved"]
    assert resolved == [], "package-lock.json names where packages come from"
    assert "omit-lockfile-registry-resolved=true" in (PACKAGE / ".npmrc").read_text()
    integrity = [item for key, item in _walk(lock) if key == "integrity"]
    assert integrity, "the lock still pins every package by its hash"


def test_types_match_server_schema(npm: str) -> None:
    _run([npm, "run", "check-types"], env={"FOLDWISE_PYTHON": sys.executable})


def test_dist_matches_source(npm: str) -> None:
    _run([npm, "run", "check-build"])


def test_code_is_formatted(npm: str) -> None:
    _run([npm, "run", "check-format"])


def test_public_types_compile(npm: str) -> None:
    """test/types/usage.ts against dist/*.d.ts: typed calls compile, wrong ones do not."""
    _run([npm, "run", "check-api"])


def test_node_suite(npm: str, db_url: str) -> None:
    foldwise = Path(sys.executable).parent / "foldwise"
    output = _run(
        [npm, "test"],
        env={"FOLDWISE_TEST_DATABASE_URL": db_url, "FOLDWISE_BIN": str(foldwise)},
        timeout=SUITE_TIMEOUT_S,
    )
    summary = dict(
        re.findall(r"^ℹ (pass|fail|skipped|cancelled|todo) (\d+)$", output, re.MULTILINE)
    )
    assert summary.get("fail") == "0", output[-4000:]
    assert int(summary.get("pass", "0")) > 0, output[-4000:]
    assert summary.get("skipped") == "0" and summary.get("todo") == "0", output[-4000:]
