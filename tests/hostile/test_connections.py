"""Connection hygiene on a real `foldwise serve`: stalled clients are closed within the read
deadlines, everyone else is served; an unexpected error ends only its own response."""

from __future__ import annotations

import asyncio
import socket
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from app.core.guards import RequestGuardMiddleware
from tests.support.servers import Server

# Deadlines of the server under test; a stalled connection must be gone well within LIMIT_S.
DEADLINE_S = "1"
LIMIT_S = 8.0

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    workdir: Path = tmp_path_factory.mktemp("conn")
    started = Server(
        f"sqlite:///{workdir / 'f.db'}",
        workdir,
        FOLDWISE_HEADER_TIMEOUT_S=DEADLINE_S,
        FOLDWISE_BODY_TIMEOUT_S=DEADLINE_S,
    ).start()
    try:
        yield started
    finally:
        started.stop()


def _connect(server: Server) -> socket.socket:
    sock = socket.create_connection(("127.0.0.1", server.port), timeout=LIMIT_S)
    return sock


def _closed_by_server(sock: socket.socket) -> bool:
    """Read until EOF; False if the server kept the connection open past LIMIT_S."""
    try:
        while sock.recv(65536):
            pass
    except TimeoutError:
        return False
    except ConnectionResetError:
        return True
    return True


def _read_response(sock: socket.socket) -> bytes:
    """One whole HTTP response (headers, then Content-Length bytes of body)."""
    data = b""
    while b"\r\n\r\n" not in data:
        data += sock.recv(65536)
    head, _, body = data.partition(b"\r\n\r\n")
    length = next(
        int(line.split(b":", 1)[1])
        for line in head.split(b"\r\n")
        if line.lower().startswith(b"content-length:")
    )
    while len(body) < length:
        body += sock.recv(65536)
    return head


STALLS = {
    "nothing": b"",
    "half the headers": b"GET /healthz HTTP/1.1\r\nHost: x\r\n",
    "half a body": (
        b"POST /count-tokens HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
        b'Content-Length: 100\r\n\r\n{"text": "'
    ),
    "a second request, half sent": (
        b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\nGET /healthz HTTP/1.1\r\nHo"
    ),
}


class TestStalledClients:
    @pytest.mark.parametrize("stall", list(STALLS))
    def test_is_closed_within_the_deadline(self, server: Server, stall: str) -> None:
        with _connect(server) as sock:
            sock.sendall(STALLS[stall])
            assert _closed_by_server(sock), f"{stall}: still open after {LIMIT_S} s"

    def test_many_stalled_clients_do_not_starve_the_rest(self, server: Server) -> None:
        stalled = [_connect(server) for _ in range(50)]
        for sock in stalled:
            sock.sendall(STALLS["half the headers"])
        with _connect(server) as sock:
            sock.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
            assert b"200 OK" in _read_response(sock)
        try:
            assert all(_closed_by_server(sock) for sock in stalled)
        finally:
            for sock in stalled:
                sock.close()

    def test_keep_alive_serves_several_requests(self, server: Server) -> None:
        with _connect(server) as sock:
            for _ in range(3):
                sock.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
                assert b"200 OK" in _read_response(sock)


async def _run(guard: RequestGuardMiddleware) -> list[dict[str, Any]]:
    """One GET through `guard`; the ASGI messages it sent."""
    sent: list[dict[str, Any]] = []

    async def send(message: Any) -> None:
        sent.append(message)

    async def receive() -> dict[str, Any]:
        return {"type": "http.request", "body": b""}

    await guard({"type": "http", "method": "GET", "path": "/x"}, receive, send)
    return sent


class TestUnexpectedErrors:
    async def test_a_500_is_a_response_not_a_dropped_connection(self) -> None:
        async def broken(_scope: Any, _receive: Any, _send: Any) -> None:
            raise RuntimeError("a bug")

        sent = await _run(RequestGuardMiddleware(broken, deadline_s=5))  # does not raise
        assert sent[0]["status"] == 500
        assert b'"internal_error"' in sent[1]["body"]

    async def test_a_request_past_its_deadline_is_a_503(self) -> None:
        async def stuck(_scope: Any, _receive: Any, _send: Any) -> None:
            await asyncio.Event().wait()

        sent = await _run(RequestGuardMiddleware(stuck, deadline_s=0.05))
        assert sent[0]["status"] == 503
        assert (b"retry-after", b"1") in sent[0]["headers"]
        assert b'"request_timeout"' in sent[1]["body"]
