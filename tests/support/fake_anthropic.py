"""A scripted fake of the Anthropic Messages API on loopback, for the real SDK to talk to.

It runs an asyncio server on its own thread and event loop, speaks just enough HTTP/1.1
(keep-alive, Content-Length bodies) for the SDK, and records every request so tests can assert
what left the process. Behaviours are taken from `script` in order, then `default`.
"""

from __future__ import annotations

import asyncio
import json
import threading
from collections.abc import Callable
from concurrent.futures import Future
from dataclasses import dataclass, field
from typing import Any

ERROR_TYPES = {
    401: "authentication_error",
    429: "rate_limit_error",
    500: "api_error",
    529: "overloaded_error",
}
SLOW_SECONDS = 5.0


@dataclass
class Recorded:
    path: str
    headers: dict[str, str]
    body: dict[str, Any]

    @property
    def prompt(self) -> str:
        """The user prompt text the summarizer sent."""
        return str(self.body["messages"][0]["content"])


@dataclass
class FakeAnthropic:
    script: list[str] = field(default_factory=list)
    default: str = "ok"
    reply: Callable[[Recorded], str] = lambda request: "Task progress: summarized."
    requests: list[Recorded] = field(default_factory=list)
    port: int = 0
    usage: Callable[[Recorded, str], dict[str, int]] | None = None
    """The reply's `usage` for a request and its text (a provider's billing); default: ~4
    characters a token of the first message and of the text."""

    def __post_init__(self) -> None:
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, daemon=True)
        self._tasks: set[asyncio.Task[None]] = set()
        self._server: asyncio.Server | None = None

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self) -> FakeAnthropic:
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
                status, headers, body = await self._respond(behaviour, request)
                writer.write(_response(status, headers, body))
                await writer.drain()
        except (asyncio.CancelledError, ConnectionError, asyncio.IncompleteReadError):
            pass
        finally:
            self._tasks.discard(task)
            writer.close()

    async def _respond(
        self, behaviour: str, request: Recorded
    ) -> tuple[int, dict[str, str], bytes]:
        if behaviour == "hang":
            await asyncio.Event().wait()
        if behaviour == "slow":
            await asyncio.sleep(SLOW_SECONDS)
        if behaviour.startswith("delay:"):  # a healthy reply after that many seconds
            await asyncio.sleep(float(behaviour.removeprefix("delay:")))
            behaviour = "ok"
        if behaviour == "malformed":
            return 200, {}, b'{"id": "msg_1", "content": [ {"type": "te'
        if behaviour.isdigit():
            status = int(behaviour)
            extra = {"retry-after": "3600"} if status == 429 else {}
            error = {
                "type": "error",
                "error": {
                    "type": ERROR_TYPES.get(status, "api_error"),
                    "message": f"scripted {status}",
                },
            }
            return status, extra, json.dumps(error).encode()
        text = {"empty": "", "long": "lorem ipsum dolor " * 3000}.get(behaviour)
        if text is None:
            text = self.reply(request)
        message = {
            "id": f"msg_{len(self.requests)}",
            "type": "message",
            "role": "assistant",
            "model": request.body.get("model", "fake"),
            "content": [{"type": "text", "text": text}],
            "stop_reason": "end_turn",
            "stop_sequence": None,
            "usage": self.usage(request, text)
            if self.usage
            else {"input_tokens": len(request.prompt) // 4, "output_tokens": len(text) // 4},
        }
        return 200, {}, json.dumps(message).encode()


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
