"""Connection hygiene for `foldwise serve`: uvicorn's HTTP protocol with read deadlines.

uvicorn closes an idle keep-alive connection after `timeout_keep_alive`, but has no limit on
how long a client may take to send a request: a client that sends nothing, half the headers
or half a body kept its connection (and a slot) for minutes. This protocol gives each
request `header_timeout_s` from the moment the server is ready to read it until its headers
are complete, then `body_timeout_s` for the whole body; past either, the connection is
closed. Requests being processed and idle keep-alive connections are not affected.

Writing has a deadline too. A response is written into the transport's buffer and the kernel
sends it as the client reads; a client that never reads kept its connection and the buffered
response (MBs) for ever, since closing a transport waits for its buffer to drain. Once
writing pauses (the buffer is full) or a response is complete but not yet sent, the client
has `send_timeout_s` to make progress: if the buffer has not shrunk by then, the connection
is aborted (dropped with its buffer).
"""

from __future__ import annotations

import asyncio
from typing import Any

from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

from app.core.settings import get_settings


class TimedHttpToolsProtocol(HttpToolsProtocol):
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        settings = get_settings()  # read in each worker process, from the same environment
        self._header_timeout_s = settings.header_timeout_s
        self._body_timeout_s = settings.body_timeout_s
        self._send_timeout_s = settings.send_timeout_s
        self._read_deadline: asyncio.TimerHandle | None = None
        self._send_deadline: asyncio.TimerHandle | None = None
        self._unsent_bytes = 0  # what the buffer held when the send deadline was armed

    def _arm(self, seconds: float) -> None:
        self._disarm()
        self._read_deadline = self.loop.call_later(seconds, self._too_slow)

    def _disarm(self) -> None:
        if self._read_deadline is not None:
            self._read_deadline.cancel()
            self._read_deadline = None

    def _too_slow(self) -> None:
        self._read_deadline = None
        if not self.transport.is_closing():
            self.transport.close()

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self._arm(self._header_timeout_s)

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm()
        self._disarm_send()
        super().connection_lost(exc)

    def _arm_send(self) -> None:
        self._disarm_send()
        self._unsent_bytes = self.transport.get_write_buffer_size()
        self._send_deadline = self.loop.call_later(self._send_timeout_s, self._check_sending)

    def _disarm_send(self) -> None:
        if self._send_deadline is not None:
            self._send_deadline.cancel()
            self._send_deadline = None

    def _check_sending(self) -> None:
        self._send_deadline = None
        unsent = self.transport.get_write_buffer_size()
        if unsent == 0:
            return  # all sent
        if unsent >= self._unsent_bytes:
            self.transport.abort()  # the client did not read: drop the connection and buffer
        else:
            self._arm_send()  # it is reading: the next period starts now

    def pause_writing(self) -> None:
        super().pause_writing()
        self._arm_send()

    def resume_writing(self) -> None:
        super().resume_writing()
        self._arm_send()  # the rest of the buffer must go within the next period too

    def on_headers_complete(self) -> None:
        self._arm(self._body_timeout_s)  # disarmed at once by a request without a body
        super().on_headers_complete()

    def on_message_complete(self) -> None:
        self._disarm()
        super().on_message_complete()

    def on_response_complete(self) -> None:
        if self._send_deadline is None and self.transport.get_write_buffer_size():
            self._arm_send()  # a response still in the buffer must reach the client in time
        super().on_response_complete()
        if not self.transport.is_closing() and not self.pipeline:
            self._arm(self._header_timeout_s)  # the next request on this connection
