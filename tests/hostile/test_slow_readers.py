"""Slow readers on a real `foldwise serve`: a client that asks for a multi-MB response and
never reads it is disconnected after FOLDWISE_SEND_TIMEOUT_S (its buffered response dropped);
a client that reads is served in full."""

from __future__ import annotations

import json
import socket
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.servers import Server

SEND_TIMEOUT_S = 1.0
# Well past the send deadline, so a connection still open then was kept.
WAIT_S = SEND_TIMEOUT_S + 3
READ_TIMEOUT_S = 10.0
# A run of newlines is 16 characters a token and two bytes each in JSON: 3M newlines are
# ~190k tokens (within gpt-4.1's window, so nothing is cut) and a 6 MB response, more than
# the kernel's socket buffers on loopback hold (4 MB send, a few KB receive here).
NEWLINES = 3_000_000

pytestmark = pytest.mark.slow


@pytest.fixture
def server(db_url: str, tmp_path: Path) -> Iterator[Server]:
    """A real server on each database (the `db_url` parameters)."""
    workdir = tmp_path
    started = Server(
        db_url,
        workdir,
        FOLDWISE_SEND_TIMEOUT_S=str(SEND_TIMEOUT_S),
        FOLDWISE_REQUEST_TIMEOUT_S="60",
    ).start()
    try:
        yield started
    finally:
        started.stop()


def _large_request() -> bytes:
    body = json.dumps(
        {
            "messages": [{"role": "user", "content": "\n" * NEWLINES + "x"}],
            "model": "gpt-4.1",
            "format": "openai",
        }
    ).encode()
    head = (
        "POST /assemble-context HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
        f"Content-Length: {len(body)}\r\n\r\n"
    ).encode()
    return head + body


def _connect(server: Server, receive_buffer: int | None = None) -> socket.socket:
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    if receive_buffer is not None:  # before connecting, so the window is small from the start
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, receive_buffer)
    sock.settimeout(READ_TIMEOUT_S)
    sock.connect(("127.0.0.1", server.port))
    return sock


def _read_all(sock: socket.socket) -> tuple[bytes, bool]:
    """Everything the server sends until it closes: (bytes, closed by the server)."""
    data = b""
    try:
        while chunk := sock.recv(1 << 20):
            data += chunk
    except TimeoutError:
        return data, False
    except ConnectionResetError:
        pass
    return data, True


def _expected_length(data: bytes) -> int:
    head = data.partition(b"\r\n\r\n")[0]
    assert head.startswith(b"HTTP/1.1 200"), head[:200]
    length = next(
        int(line.split(b":", 1)[1])
        for line in head.split(b"\r\n")
        if line.lower().startswith(b"content-length:")
    )
    return len(head) + 4 + length


class TestSlowReaders:
    def test_a_client_that_never_reads_is_disconnected(self, server: Server) -> None:
        stalled = [_connect(server, receive_buffer=4096) for _ in range(5)]
        try:
            for sock in stalled:
                sock.sendall(_large_request())
            time.sleep(WAIT_S)  # the responses are written, and nobody reads them
            for sock in stalled:
                data, closed = _read_all(sock)
                assert closed, "the connection was kept past the send timeout"
                assert len(data) < _expected_length(data), "the whole response was still there"
        finally:
            for sock in stalled:
                sock.close()

    def test_a_client_that_reads_gets_the_whole_response(self, server: Server) -> None:
        with _connect(server, receive_buffer=4096) as sock:
            sock.sendall(
                _large_request().replace(b"Host: x\r\n", b"Host: x\r\nConnection: close\r\n")
            )
            data, closed = _read_all(sock)
        assert closed
        assert len(data) == _expected_length(data) > 2 * NEWLINES
