"""The deploy files an operator starts from: compose passes the LLM key through and restarts
the services; `make run` / `make demo` take a PORT."""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

import yaml  # type: ignore[import-untyped]  # (schemathesis brings it; no stubs in the lock)

ROOT = Path(__file__).resolve().parents[1]


def _compose() -> dict[str, Any]:
    data: dict[str, Any] = yaml.safe_load((ROOT / "docker-compose.yml").read_text())
    return data


def test_compose_passes_the_anthropic_key_from_the_shell_or_env_file() -> None:
    environment = _compose()["services"]["foldwise"]["environment"]
    assert environment["ANTHROPIC_API_KEY"] == "${ANTHROPIC_API_KEY:-}"


def test_compose_restarts_both_services() -> None:
    services = _compose()["services"]
    assert {name: s.get("restart") for name, s in services.items()} == {
        "postgres": "unless-stopped",
        "foldwise": "unless-stopped",
    }


def test_make_run_and_demo_take_a_port() -> None:
    def planned(target: str) -> str:
        done = subprocess.run(
            ["make", "-n", "-o", "install", target, "PORT=8123"],
            cwd=ROOT,
            capture_output=True,
            text=True,
            check=True,
        )
        return done.stdout

    assert "foldwise serve --host 127.0.0.1 --port 8123" in planned("run")
    assert "foldwise demo --url http://127.0.0.1:8123" in planned("demo")
