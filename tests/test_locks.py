"""The hash-pinned lock files agree: the service image (requirements-serve.lock) installs
exactly the versions and hashes the test suite runs with (requirements.lock), and no lock
names a package index."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PIN = re.compile(r"^([A-Za-z0-9_.-]+)==(\S+)", re.MULTILINE)


def pins(name: str) -> dict[str, str]:
    return {package.lower(): version for package, version in PIN.findall(read(name))}


def read(name: str) -> str:
    return (ROOT / name).read_text("utf-8")


def hashes(name: str, package: str) -> set[str]:
    """The sha256 hashes pinned for `package`: the lines from its pin to the next pin."""
    lines = read(name).splitlines()
    start = next(i for i, line in enumerate(lines) if line.lower().startswith(f"{package}=="))
    block = [lines[start]]
    for line in lines[start + 1 :]:
        if PIN.match(line):
            break
        block.append(line)
    return set(re.findall(r"sha256:[0-9a-f]{64}", "\n".join(block)))


def test_the_service_lock_is_a_subset_of_the_test_lock() -> None:
    serve, full = pins("requirements-serve.lock"), pins("requirements.lock")
    assert {"fastapi", "sqlalchemy", "tiktoken", "anthropic"} <= set(serve)
    assert not {"pytest", "playwright", "schemathesis", "langgraph"} & set(serve)
    for package, version in serve.items():
        assert full.get(package) == version, package
        assert hashes("requirements-serve.lock", package) == hashes("requirements.lock", package)


def test_the_dockerfile_installs_the_service_lock() -> None:
    dockerfile = read("Dockerfile")
    assert "pip install --require-hashes --no-deps -r requirements-serve.lock" in dockerfile
    assert "-r requirements.lock" not in dockerfile and "COPY requirements.lock" not in dockerfile


def test_no_lock_names_a_package_index() -> None:
    for name in ("requirements.lock", "requirements-serve.lock", "requirements-bench.lock"):
        assert "://" not in read(name), name
