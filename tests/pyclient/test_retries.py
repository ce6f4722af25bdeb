"""Retries: 503 answers and connection errors only, and never in a way that stores twice.
A fault proxy between client and a real server drops responses after the server acted."""

from __future__ import annotations

from collections.abc import Callable, Iterator

import pytest
from foldwise_client import (
    APIConnectionError,
    APITimeoutError,
    ServiceUnavailableError,
    SessionNotFoundError,
)

from tests.pyclient.conftest import AsyncView, new_id
from tests.pyclient.fault_proxy import FaultProxy
from tests.support.servers import Server


@pytest.fixture
def proxy(server: Server) -> Iterator[FaultProxy]:
    started = FaultProxy(server.base_url, stall_s=1.0).start()
    try:
        yield started
    finally:
        started.stop()


@pytest.fixture
def fw(proxy: FaultProxy, make_fw: Callable[..., AsyncView]) -> AsyncView:
    return make_fw(proxy.base_url)


async def test_a_retried_append_stores_once(fw: AsyncView, proxy: FaultProxy) -> None:
    sid = (await fw.create_session(new_id("retry")))["id"]
    proxy.inject("POST", f"/sessions/{sid}/messages", "drop_response")
    batch = [{"role": "user", "content": "once"}, {"role": "assistant", "content": "only once"}]
    result = await fw.append_messages(sid, batch)

    assert proxy.forwarded.count(("POST", f"/sessions/{sid}/messages")) == 2
    assert [m["duplicate"] for m in result["messages"]] == [True, True]
    stored = (await fw.list_messages(sid))["messages"]
    assert [(m["seq"], m["content"]) for m in stored] == [(1, "once"), (2, "only once")]
    assert [m["id"] for m in stored] == [m["id"] for m in result["messages"]]


async def test_a_retried_turn_stores_once_and_answers_the_context(
    fw: AsyncView, proxy: FaultProxy
) -> None:
    sid = (await fw.create_session(new_id("retry")))["id"]
    proxy.inject("POST", f"/sessions/{sid}/turn", "drop_response")
    taken = await fw.turn(sid, [{"role": "user", "content": "once"}], format="openai")

    assert proxy.count("POST", f"/sessions/{sid}/turn") == 2
    assert [m["duplicate"] for m in taken.append["messages"]] == [True]
    assert taken.context.messages == [{"role": "user", "content": "once"}]
    assert len((await fw.list_messages(sid))["messages"]) == 1


async def test_a_create_whose_response_was_lost_is_not_resent(
    fw: AsyncView, proxy: FaultProxy
) -> None:
    sid = new_id("lost")
    proxy.inject("POST", "/sessions", "drop_response")
    with pytest.raises(APIConnectionError):
        await fw.create_session(sid)
    assert proxy.count("POST", "/sessions") == 1
    assert (await fw.get_session(sid))["id"] == sid, "the server did create it"


async def test_reads_are_retried_after_a_reset(fw: AsyncView, proxy: FaultProxy) -> None:
    sid = (await fw.create_session(new_id("reset")))["id"]
    proxy.inject("GET", f"/sessions/{sid}", "reset", "drop_response")
    assert (await fw.get_session(sid))["id"] == sid
    assert proxy.count("GET", f"/sessions/{sid}") == 3


async def test_503_is_retried_then_raised(fw: AsyncView, proxy: FaultProxy) -> None:
    proxy.inject("GET", "/models", "unavailable", "unavailable")
    assert await fw.list_models()
    assert proxy.count("GET", "/models") == 3

    proxy.inject("GET", "/models", "unavailable", "unavailable", "unavailable")
    with pytest.raises(ServiceUnavailableError) as caught:
        await fw.list_models()
    assert (caught.value.status, caught.value.code) == (503, "database_unavailable")
    assert proxy.count("GET", "/models") == 6, "max_retries=2: three requests"


async def test_503_is_retried_for_a_non_idempotent_call(fw: AsyncView, proxy: FaultProxy) -> None:
    sid = new_id("created")
    proxy.inject("POST", "/sessions", "unavailable")
    assert (await fw.create_session(sid))["id"] == sid
    assert proxy.count("POST", "/sessions") == 2
    assert proxy.forwarded.count(("POST", "/sessions")) == 1


async def test_timeouts(proxy: FaultProxy, make_fw: Callable[..., AsyncView]) -> None:
    fw = make_fw(proxy.base_url, timeout=0.4)
    sid = (await fw.create_session(new_id("slow")))["id"]
    proxy.inject("GET", f"/sessions/{sid}", "stall")
    assert (await fw.get_session(sid))["id"] == sid, "a read is retried after a timeout"

    proxy.inject("POST", f"/sessions/{sid}/summarize", "stall")
    with pytest.raises(APITimeoutError) as caught:
        await fw.summarize(sid)
    assert f"{proxy.base_url}/sessions/{sid}/summarize: no response from" in str(caught.value)
    assert proxy.count("POST", f"/sessions/{sid}/summarize") == 1


async def test_max_retries_zero_does_not_retry(
    proxy: FaultProxy, make_fw: Callable[..., AsyncView]
) -> None:
    fw = make_fw(proxy.base_url, max_retries=0)
    proxy.inject("GET", "/models", "unavailable")
    with pytest.raises(ServiceUnavailableError):
        await fw.list_models()
    assert proxy.count("GET", "/models") == 1


async def test_a_delete_whose_response_was_lost_succeeds(fw: AsyncView, proxy: FaultProxy) -> None:
    sid = (await fw.create_session(new_id("gone")))["id"]
    proxy.inject("DELETE", f"/sessions/{sid}", "drop_response")
    assert await fw.delete_session(sid) is None
    assert proxy.forwarded.count(("DELETE", f"/sessions/{sid}")) == 2
    with pytest.raises(SessionNotFoundError):
        await fw.delete_session(sid)
