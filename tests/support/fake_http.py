"""The plumbing of the scripted provider fakes: an HTTP/1.1 server on loopback for the real
SDKs to talk to, and the behaviours every model API shares.

`FakeHTTP` runs an asyncio server on its own thread and event loop, speaks just enough
HTTP/1.1 (keep-alive, Content-Length bodies) for the SDKs, and records every request so tests
can assert what left the process. Behaviours are taken from `script` in order, then `default`;
these are the server's own:

- `hang`: never answers; `slow`: answers after SLOW_SECONDS; `delay:<seconds>`: a healthy
  reply after that long;
- `truncated`: a healthy reply's head (its full Content-Length) and half its body, then the
  connection closed.

The rest is `_respond`'s. `FakeModelAPI` answers a model API's behaviours — `ok` (the `reply`
text), `empty`, `long`, `refusal`, `malformed` (JSON cut short), an HTTP status (`429` carries
`retry-after`, an hour unless `retry_after` says otherwise) — in the provider's shape, which a
subclass writes.
"""

from __future__ import annotations

import asyncio
import json
import threading
from collections.abc import Callable
from concurrent.futures import Future
from dataclasses import dataclass, field
from typing import Any

SLOW_SECONDS = 5.0
LONG_TEXT = "lorem ipsum dolor " * 3000
Answer = tuple[int, dict[str, str], bytes]


@dataclass
class Recorded:
    path: str
    headers: dict[str, str]
    body: dict[str, Any]

    @property
    def prompt(self) -> str:
        """The text of the last turn the client sent (Anthropic and Chat `messages`,
        Responses `input`, Gemini `contents`): the summarizer's prompt or instruction."""
        turns = self.body.get("messages") or self.body.get("contents") or self.body.get("input")
        if isinstance(turns, str):
            return turns
        return text_of(turns[-1]) if turns else ""


def text_of(turn: dict[str, Any]) -> str:
    content = turn.get("content", turn.get("parts"))
    if isinstance(content, str):
        return content
    return "\n".join(str(block.get("text", "")) for block in content or ())


@dataclass
class FakeHTTP:
    script: list[str] = field(default_factory=list)
    default: str = "ok"
    requests: list[Recorded] = field(default_factory=list)
    port: int = 0

    def __post_init__(self) -> None:
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, daemon=True)
        self._tasks: set[asyncio.Task[None]] = set()
        self._server: asyncio.Server | None = None

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self) -> FakeHTTP:
        self._thread.start()
        future: Future[asyncio.Server] = asyncio.run_coroutine_threadsafe(
            asyncio.start_server(self._connection, "127.0.0.1", 0), self._loop
        )
        self._server = future.result(timeout=5)
        self.port = self._server.sockets[0].getsockname()[1]
        return self

    def stop(self) -> None:
        async def shutdown() -> None:
            for task in list(self._tasks):
                task.cancel()
            if self._server is not None:
                self._server.close()
            await asyncio.gather(*self._tasks, return_exceptions=True)

        asyncio.run_coroutine_threadsafe(shutdown(), self._loop).result(timeout=5)
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(timeout=5)
        self._loop.close()

    async def _connection(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None
        self._tasks.add(task)
        try:
            while True:
                request = await _read_request(reader)
                if request is None:
                    break
                self.requests.append(request)
                behaviour = self.script.pop(0) if self.script else self.default
                data, whole = await self._answer(behaviour, request)
                writer.write(data)
                await writer.drain()
                if not whole:
                    break
        except (asyncio.CancelledError, ConnectionError, asyncio.IncompleteReadError):
            pass
        finally:
            self._tasks.discard(task)
            writer.close()

    async def _answer(self, behaviour: str, request: Recorded) -> tuple[bytes, bool]:
        """The bytes to send, and whether the connection stays open after them."""
        if behaviour == "hang":
            await asyncio.Event().wait()
        if behaviour == "slow":
            await asyncio.sleep(SLOW_SECONDS)
        if behaviour.startswith("delay:"):
            await asyncio.sleep(float(behaviour.removeprefix("delay:")))
            behaviour = "ok"
        if behaviour == "truncated":
            status, headers, body = await self._respond("ok", request)
            whole = _response(status, headers, body)
            return whole[: len(whole) - len(body) // 2], False
        return _response(*await self._respond(behaviour, request)), True

    async def _respond(self, behaviour: str, request: Recorded) -> Answer:
        raise NotImplementedError


@dataclass
class FakeModelAPI(FakeHTTP):
    reply: Callable[[Recorded], str] = lambda request: "Task progress: summarized."
    cached_tokens: int = 0
    """Prompt tokens each healthy reply says were read from the provider's cache."""
    retry_after: str = "3600"

    async def _respond(self, behaviour: str, request: Recorded) -> Answer:
        if behaviour == "malformed":
            return 200, {}, b'{"id": "resp_1", "content": [ {"type": "te'
        if behaviour.isdigit():
            status = int(behaviour)
            extra = {"retry-after": self.retry_after} if status == 429 else {}
            return status, extra, json.dumps(self.error(status)).encode()
        if behaviour == "refusal":
            return 200, {}, json.dumps(self.refusal(request)).encode()
        text = {"empty": "", "long": LONG_TEXT}.get(behaviour)
        if text is None:
            text = self.reply(request)
        return 200, {}, json.dumps(self.message(request, text)).encode()

    def prompt_tokens(self, request: Recorded) -> int:
        """The uncached prompt tokens a healthy reply reports: a quarter of the prompt's text."""
        return len(request.prompt) // 4

    def error(self, status: int) -> dict[str, Any]:
        raise NotImplementedError

    def message(self, request: Recorded, text: str) -> dict[str, Any]:
        raise NotImplementedError

    def refusal(self, request: Recorded) -> dict[str, Any]:
        raise NotImplementedError


async def _read_request(reader: asyncio.StreamReader) -> Recorded | None:
    try:
        head = await reader.readuntil(b"\r\n\r\n")
    except asyncio.IncompleteReadError:
        return None
    lines = head.decode("latin-1").split("\r\n")
    path = lines[0].split(" ")[1]
    headers = {}
    for line in lines[1:]:
        if ":" in line:
            name, value = line.split(":", 1)
            headers[name.strip().lower()] = value.strip()
    body = await reader.readexactly(int(headers.get("content-length", "0")))
    return Recorded(path, headers, json.loads(body) if body else {})


def _response(status: int, headers: dict[str, str], body: bytes) -> bytes:
    head = [
        f"HTTP/1.1 {status} Scripted",
        "content-type: application/json",
        f"content-length: {len(body)}",
        "request-id: req_fake",
    ]
    head += [f"{name}: {value}" for name, value in headers.items()]
    return ("\r\n".join(head) + "\r\n\r\n").encode() + body
