"""Real `foldwise serve` processes on loopback, and a fake Messages API that is slow on purpose.

Used by the multi-process tests: each server is its own OS process with its own engine and
pool, so only the database can keep them from folding twice.
"""

from __future__ import annotations

import asyncio
import os
import signal
import socket
import subprocess
import time
from pathlib import Path
from typing import Any

import httpx

from tests.support.fake_anthropic import FakeAnthropic, Recorded
from tests.support.transcripts import chat as transcript

ROOT = Path(__file__).resolve().parents[2]
FOLDWISE = ROOT / ".venv" / "bin" / "foldwise"
# Starting is importing the app and warming the encodings: seconds alone, but over 20 on a
# machine busy with other test runs. A server that never comes up still fails the test.
READY_TIMEOUT_S = 120.0  # a loaded 2-core CI machine can take long to warm the encodings


class SlowAnthropic(FakeAnthropic):
    """Answers like FakeAnthropic after `delay` seconds, so racing requests really overlap."""

    delay: float = 0.5

    def start(self) -> SlowAnthropic:
        super().start()
        return self

    async def _respond(
        self, behaviour: str, request: Recorded
    ) -> tuple[int, dict[str, str], bytes]:
        await asyncio.sleep(self.delay)
        return await super()._respond(behaviour, request)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


class Server:
    """One `foldwise serve` subprocess bound to 127.0.0.1."""

    def __init__(self, database_url: str, workdir: Path, **env: str) -> None:
        self.port = free_port()
        self.base_url = f"http://127.0.0.1:{self.port}"
        self.log = workdir / f"server-{self.port}.log"
        self.env = {
            **{
                k: v for k, v in os.environ.items() if not k.startswith(("FOLDWISE_", "ANTHROPIC_"))
            },
            "FOLDWISE_DATABASE_URL": database_url,
            "FOLDWISE_API_KEYS": "",
            "FOLDWISE_LOG_LEVEL": "warning",
            # As in make_settings: folds waited for by the request that needs them, unless a
            # test of folds ahead of need says otherwise.
            "FOLDWISE_FOLD_AHEAD": "1",
            "FOLDWISE_FOLD_HARD_WAIT_S": "60",
            **env,
        }
        self.workdir = workdir
        self.process: subprocess.Popen[bytes] | None = None

    def start(self) -> Server:
        return self.launch().wait_ready()

    def launch(self) -> Server:
        """Start the process without waiting (start several, then `wait_ready` each)."""
        with self.log.open("ab") as log:
            self.process = subprocess.Popen(
                [str(FOLDWISE), "serve", "--host", "127.0.0.1", "--port", str(self.port)],
                cwd=self.workdir,  # no stray .env from the developer's checkout
                env=self.env,
                stdout=log,
                stderr=subprocess.STDOUT,
            )
        return self

    def wait_ready(self) -> Server:
        assert self.process is not None, "launch() first"
        deadline = time.monotonic() + READY_TIMEOUT_S
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"server exited: {self.log.read_text()[-2000:]}")
            try:
                if httpx.get(f"{self.base_url}/readyz", timeout=1).status_code == 200:
                    return self
            except httpx.HTTPError:
                pass
            time.sleep(0.1)
        self.stop()
        raise RuntimeError(f"server not ready: {self.log.read_text()[-2000:]}")

    def kill(self) -> None:
        """SIGKILL: no shutdown hooks, no rollback, no lease release — a crash."""
        if self.process is not None and self.process.poll() is None:
            os.kill(self.process.pid, signal.SIGKILL)
            self.process.wait(timeout=10)

    def stop(self) -> None:
        if self.process is None or self.process.poll() is not None:
            return
        self.process.terminate()
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.kill()

    def client(self, **kwargs: Any) -> httpx.AsyncClient:
        return httpx.AsyncClient(base_url=self.base_url, timeout=60, **kwargs)


__all__ = ["ROOT", "Server", "SlowAnthropic", "free_port", "transcript"]
