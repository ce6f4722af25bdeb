"""`ClientPerLoop`: one httpx client per event loop, closed with its loop or by `aclose()`;
and the lifetime of `AsyncFoldwise` / `FoldwiseSession` built on it."""

from __future__ import annotations

import asyncio
import threading

import httpx
from foldwise_client import AsyncFoldwise
from foldwise_client._loops import ClientPerLoop
from foldwise_client.agents import FoldwiseSession

from tests.pyclient.conftest import new_id
from tests.support.servers import Server


def per_loop() -> tuple[ClientPerLoop, list[httpx.AsyncClient]]:
    made: list[httpx.AsyncClient] = []

    def factory() -> httpx.AsyncClient:
        made.append(httpx.AsyncClient())
        return made[-1]

    return ClientPerLoop(factory), made


async def test_one_client_per_loop_reused_on_that_loop() -> None:
    clients, made = per_loop()
    first = await clients.current()
    together = await asyncio.gather(*(clients.current() for _ in range(5)))
    assert all(c is first for c in together)
    other = await asyncio.to_thread(asyncio.run, clients.current())
    assert other is not first and made == [first, other]
    assert other.is_closed, "asyncio.run closed the client of its loop on the way out"
    assert not first.is_closed
    await clients.aclose()
    assert first.is_closed


def test_a_new_loop_after_the_first_closed_gets_a_new_client() -> None:
    clients, made = per_loop()
    first = asyncio.run(clients.current())
    second = asyncio.run(clients.current())
    assert first is not second and first.is_closed and second.is_closed and len(made) == 2


async def test_aclose_reaches_a_loop_running_in_another_thread() -> None:
    clients, made = per_loop()
    here = await clients.current()
    ready, release = threading.Event(), threading.Event()

    async def hold() -> None:
        await clients.current()
        ready.set()
        await asyncio.to_thread(release.wait, 10)

    thread = threading.Thread(target=asyncio.run, args=(hold(),))
    thread.start()
    await asyncio.to_thread(ready.wait, 10)
    await clients.aclose()
    for _ in range(200):  # closed on its own loop, soon
        if made[1].is_closed:
            break
        await asyncio.sleep(0.01)
    release.set()
    await asyncio.to_thread(thread.join, 10)
    assert here.is_closed and made[1].is_closed


async def test_a_closed_client_connects_again(server: Server) -> None:
    client = AsyncFoldwise(server.base_url)
    async with client:
        assert await client.list_models()
    assert await client.list_models(), "usable after close: a new connection"
    await client.close()


async def test_a_session_closes_only_the_client_it_made(server: Server) -> None:
    given = AsyncFoldwise(server.base_url)
    async with FoldwiseSession(new_id("given"), client=given) as session:
        await session.add_items([{"role": "user", "content": "hi"}])
    http = await given._http.current()
    assert not http.is_closed, "a client= given to the session stays open"
    await given.close()
    assert http.is_closed

    async with FoldwiseSession(new_id("owned"), client=None) as owned:
        opened = await owned.client._http.current()
    assert opened.is_closed
