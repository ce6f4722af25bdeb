"""Error envelopes become typed errors, with status, code, message and details."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from foldwise_client import (
    APIConnectionError,
    APIStatusError,
    AuthenticationError,
    ConflictError,
    NotFoundError,
    PayloadTooLargeError,
    SessionExistsError,
    SessionNotFoundError,
    UnprocessableEntityError,
)

from tests.pyclient.conftest import AsyncView, new_id
from tests.pyclient.fault_proxy import FaultProxy
from tests.support.servers import Server, free_port


@pytest.fixture(scope="module")
def keyed_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    workdir: Path = tmp_path_factory.mktemp("keyed")
    started = Server(
        f"sqlite:///{workdir / 'f.db'}",
        workdir,
        FOLDWISE_API_KEYS="tenant-a:key-a,tenant-b:key-b",
        FOLDWISE_MAX_BODY_BYTES="20000",
    ).start()
    try:
        yield started
    finally:
        started.stop()


async def test_not_found_and_exists(fw: AsyncView) -> None:
    with pytest.raises(SessionNotFoundError) as missing:
        await fw.get_session(new_id("missing"))
    assert isinstance(missing.value, NotFoundError)
    assert (missing.value.status, missing.value.code) == (404, "session_not_found")
    assert missing.value.message

    sid = (await fw.create_session(new_id("dup")))["id"]
    with pytest.raises(SessionExistsError) as exists:
        await fw.create_session(sid)
    assert isinstance(exists.value, ConflictError)
    assert (exists.value.status, exists.value.code) == (409, "session_exists")


async def test_invalid_message_names_index_and_path(fw: AsyncView) -> None:
    sid = (await fw.create_session(new_id("bad")))["id"]
    with pytest.raises(UnprocessableEntityError) as caught:
        await fw.append_messages(sid, [{"role": "user", "content": "ok"}, {"role": "wizard"}])
    assert caught.value.status == 422 and caught.value.code == "invalid_message"
    assert caught.value.details["index"] == 1
    assert (await fw.get_session(sid))["message_count"] == 0, "a batch is atomic"


async def test_validation_and_conflict_codes(fw: AsyncView) -> None:
    with pytest.raises(UnprocessableEntityError) as caught:
        await fw.count_tokens()
    assert caught.value.code == "validation_error"
    sid = (await fw.create_session(new_id("usage")))["id"]
    with pytest.raises(ConflictError) as early:
        await fw.report_usage(sid, 100)
    assert early.value.code == "no_context_served"


async def test_keys_and_tenants(keyed_server: Server, make_fw: Callable[..., AsyncView]) -> None:
    with pytest.raises(AuthenticationError) as anonymous:
        await make_fw(keyed_server.base_url).list_models()
    assert (anonymous.value.status, anonymous.value.code) == (401, "unauthorized")
    with pytest.raises(AuthenticationError):
        await make_fw(keyed_server.base_url, api_key="wrong").list_models()

    tenant_a = make_fw(keyed_server.base_url, api_key="key-a")
    tenant_b = make_fw(keyed_server.base_url, api_key="key-b")
    sid = (await tenant_a.create_session(new_id("tenant")))["id"]
    assert (await tenant_a.get_session(sid))["id"] == sid
    with pytest.raises(SessionNotFoundError):
        await tenant_b.get_session(sid)


async def test_api_key_from_the_environment(
    keyed_server: Server, make_fw: Callable[..., AsyncView], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FOLDWISE_API_KEY", "key-a")
    monkeypatch.setenv("FOLDWISE_BASE_URL", keyed_server.base_url)
    fw = make_fw(None)
    assert await fw.list_models()


async def test_payload_too_large(keyed_server: Server, make_fw: Callable[..., AsyncView]) -> None:
    fw = make_fw(keyed_server.base_url, api_key="key-a")
    with pytest.raises(PayloadTooLargeError) as caught:
        await fw.count_tokens(text="x" * 30_000)
    assert (caught.value.status, caught.value.code) == (413, "payload_too_large")


async def test_a_gateway_page_is_an_error_with_its_status(
    server: Server, make_fw: Callable[..., AsyncView]
) -> None:
    proxy = FaultProxy(server.base_url).start()
    try:
        proxy.inject("GET", "/models", "html_502")
        with pytest.raises(APIStatusError) as caught:
            await make_fw(proxy.base_url).list_models()
        assert (caught.value.status, caught.value.code) == (502, "http_502")
        assert "Bad Gateway" in caught.value.message
        assert proxy.count("GET", "/models") == 1, "only 503 answers are retried"
    finally:
        proxy.stop()


async def test_nothing_listening_is_a_connection_error_naming_the_url(
    make_fw: Callable[..., AsyncView],
) -> None:
    base_url = f"http://127.0.0.1:{free_port()}"
    fw = make_fw(base_url, max_retries=1)
    with pytest.raises(APIConnectionError) as caught:
        await fw.list_models()
    assert f"GET {base_url}/models: could not reach the Foldwise server" in str(caught.value)
