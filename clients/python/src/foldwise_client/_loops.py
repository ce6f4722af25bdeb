"""One `httpx.AsyncClient` per event loop, so one `AsyncFoldwise` works from any loop and any
thread: `asyncio.run()` once per request, `Runner.run_sync` in worker threads, several loops at
once. An `httpx.AsyncClient` is bound to the loop that opened its connections; used from a
second loop it fails (`Event loop is closed`).

A loop's client is closed with the loop: asyncio.run() (like every runner that calls
`loop.shutdown_asyncgens()`) closes the async generator started next to the client, and its
`finally` closes the client before the loop goes. `aclose()` closes them all earlier."""

from __future__ import annotations

import asyncio
import threading
import weakref
from collections.abc import AsyncGenerator, Callable
from dataclasses import dataclass
from types import TracebackType
from typing import Self

import httpx


async def _closes_with_loop(client: httpx.AsyncClient) -> AsyncGenerator[None, None]:
    try:
        yield
    finally:
        await client.aclose()


@dataclass(frozen=True)
class _Opened:
    client: httpx.AsyncClient
    # Held here: the loop keeps only a weak reference to the generators it will close.
    closer: AsyncGenerator[None, None]


class ClientPerLoop:
    def __init__(self, factory: Callable[[], httpx.AsyncClient]) -> None:
        self._factory = factory
        self._opened: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, _Opened] = (
            weakref.WeakKeyDictionary()
        )
        self._lock = threading.Lock()

    async def current(self) -> httpx.AsyncClient:
        loop = asyncio.get_running_loop()
        with self._lock:
            opened = self._opened.get(loop)
            if opened is not None:
                return opened.client
            opened = _Opened(client := self._factory(), _closes_with_loop(client))
            self._opened[loop] = opened
        await anext(opened.closer)  # registers it with the loop's shutdown_asyncgens()
        return client

    async def aclose(self) -> None:
        """Closes every loop's client: this loop's now, a running loop's on that loop (not
        awaited: that loop may be waiting for this one); a closed loop's went with it."""
        here = asyncio.get_running_loop()
        with self._lock:
            opened = list(self._opened.items())
            self._opened.clear()
        for loop, each in opened:
            if loop is here:
                await each.closer.aclose()
            elif not loop.is_closed():
                asyncio.run_coroutine_threadsafe(each.closer.aclose(), loop)


class AsyncClosable:
    """`async with x:` closes `x` on the way out: for classes with an async `close()`."""

    async def close(self) -> None:
        raise NotImplementedError

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        await self.close()
