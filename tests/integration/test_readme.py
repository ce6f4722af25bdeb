"""README.md is a script that runs: every ```bash and ```python block, in order, against one
fresh `foldwise serve` (and fake provider APIs for the SDK examples), as a reader would paste
them. A block that cannot run here carries `<!-- not run: <why> -->` on the line before its
fence. A failure names the block's first line and shows it with its output."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.pyclient.fake_providers import FakeProviders
from tests.support.servers import ROOT, Server

README = ROOT / "README.md"
RUN = {"bash": "bash", "sh": "bash", "shell": "bash", "python": "python"}
NOT_RUN = re.compile(r"^<!-- not run: (?P<why>\S.*?) -->$")
FENCE = re.compile(r"^```(?P<lang>[\w+-]*)\s*$")
ERROR_ENVELOPE = '{"error":{"code"'
# The address the README's examples use, and the CLI's path in them.
README_HOST = ("http://127.0.0.1:8000", "localhost:8000", "127.0.0.1:8000")
BLOCK_TIMEOUT_S = 180


@dataclass(frozen=True)
class Block:
    line: int
    """1-based line of the opening fence."""
    lang: str
    code: str
    not_run: str | None


def blocks(text: str) -> Iterator[Block]:
    lines = text.splitlines()
    index = 0
    while index < len(lines):
        opened = FENCE.match(lines[index])
        if opened is None:
            index += 1
            continue
        end = next(i for i in range(index + 1, len(lines)) if lines[i].startswith("```"))
        marker = NOT_RUN.match(lines[index - 1].strip()) if index else None
        code = "\n".join(lines[index + 1 : end]) + "\n"
        yield Block(index + 1, opened["lang"], code, marker["why"] if marker else None)
        index = end + 1


def _localized(code: str, base_url: str) -> str:
    for host in README_HOST:
        code = code.replace(host, base_url if host.startswith("http") else base_url[7:])
    return code.replace(".venv/bin/", f"{ROOT / '.venv' / 'bin'}/")


def _run(
    block: Block, base_url: str, providers: FakeProviders, workdir: Path, database: str = ""
) -> str | None:
    """None when the block ran clean, else what went wrong. The commands of a block use the
    server's database, as `make run` and the commands share `foldwise.db` on a laptop."""
    code = _localized(block.code, base_url)
    env = {
        **{k: v for k, v in os.environ.items() if not k.startswith(("FOLDWISE_", "ANTHROPIC_"))},
        "FOLDWISE_BASE_URL": base_url,
        **({"FOLDWISE_DATABASE_URL": database} if database else {}),
        "ANTHROPIC_BASE_URL": providers.base_url,
        "ANTHROPIC_API_KEY": "test-key",
        "OPENAI_BASE_URL": providers.base_url + "/v1",
        "OPENAI_API_KEY": "test-key",
        "OPENAI_AGENTS_DISABLE_TRACING": "1",
        "PATH": f"{ROOT / '.venv' / 'bin'}:{os.environ['PATH']}",
    }
    command = (
        ["bash", "-e", "-o", "pipefail", "-c", code]
        if RUN[block.lang] == "bash"
        else [sys.executable, "-c", code]
    )
    done = subprocess.run(
        command, cwd=workdir, env=env, capture_output=True, text=True, timeout=BLOCK_TIMEOUT_S
    )
    if done.returncode != 0:
        return f"exit {done.returncode}\n--- stderr ---\n{done.stderr[-3000:]}"
    if ERROR_ENVELOPE in done.stdout.replace(" ", ""):
        return f"answered an error\n--- stdout ---\n{done.stdout[-3000:]}"
    return None


def test_every_block_runs_in_order_on_a_fresh_server(tmp_path: Path) -> None:
    runnable = [b for b in blocks(README.read_text("utf-8")) if b.lang in RUN]
    assert len([b for b in runnable if b.not_run is None]) >= 10
    providers = FakeProviders().start()
    database = f"sqlite:///{tmp_path / 'readme.db'}"
    server = Server(database, tmp_path).start()
    try:
        for block in runnable:
            if block.not_run is not None:
                continue
            failure = _run(block, server.base_url, providers, tmp_path, database)
            if failure is not None:
                pytest.fail(
                    f"README.md:{block.line} ({block.lang} block) {failure}\n"
                    f"--- block ---\n{block.code}",
                    pytrace=False,
                )
    finally:
        server.stop()
        providers.stop()


SAMPLE = """intro
```bash
echo one
```
<!-- not run: needs Docker -->
```bash
docker run x
```
```json
{"a": 1}
```
"""


def test_blocks_are_read_with_their_line_and_marker() -> None:
    assert list(blocks(SAMPLE)) == [
        Block(2, "bash", "echo one\n", None),
        Block(6, "bash", "docker run x\n", "needs Docker"),
        Block(9, "json", '{"a": 1}\n', None),
    ]


def test_a_failing_block_is_named_by_its_line(tmp_path: Path) -> None:
    providers = FakeProviders().start()
    try:
        failure = _run(Block(7, "bash", "false\n", None), "http://127.0.0.1:1", providers, tmp_path)
        envelope = _run(
            Block(8, "bash", """echo '{"error": {"code": "x"}}'\n""", None),
            "http://127.0.0.1:1",
            providers,
            tmp_path,
        )
    finally:
        providers.stop()
    assert failure is not None and failure.startswith("exit 1")
    assert envelope is not None and envelope.startswith("answered an error")
