"""Request guards: a deadline per request, and a 500 that ends only its own response.

Pure ASGI, so nothing is buffered. A request still running at its deadline is cancelled and
answered 503 `request_timeout`; CPU work already handed to a thread stops at its next
`check_deadline()` (app/core/deadline.py), and the event loop and every other request go on. An
exception no handler knew becomes the 500 envelope *here*, inside the server: uvicorn would
otherwise close the keep-alive connection after its own 500.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from app.core.deadline import deadline_after
from app.core.logging import get_logger

log = get_logger("foldwise.guards")


async def send_error(send: Send, status: int, envelope: dict[str, Any], **headers: str) -> None:
    """Send a JSON error envelope as a complete ASGI response (headers: `retry_after=…`)."""
    body = json.dumps(envelope, separators=(",", ":")).encode()  # as every other envelope
    raw: list[tuple[bytes, bytes]] = [
        (b"content-type", b"application/json"),
        (b"content-length", str(len(body)).encode()),
    ]
    raw += [(k.replace("_", "-").encode(), v.encode()) for k, v in headers.items()]
    await send({"type": "http.response.start", "status": status, "headers": raw})
    await send({"type": "http.response.body", "body": body})


class RequestGuardMiddleware:
    def __init__(self, app: ASGIApp, deadline_s: float) -> None:
        self.app = app
        self.deadline_s = deadline_s

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = False

        async def tracking_send(message: Message) -> None:
            nonlocal started
            started = started or message["type"] == "http.response.start"
            await send(message)

        failure: tuple[int, str, str, dict[str, Any]] | None = None
        try:
            # The deadline is also handed to the request's work (deadline.py): a worker thread
            # cannot be cancelled, so its loops stop themselves when the deadline passes.
            with deadline_after(self.deadline_s):
                async with asyncio.timeout(self.deadline_s):
                    await self.app(scope, receive, tracking_send)
        except TimeoutError:
            log.warning(
                "request %s %s passed its %ss deadline",
                scope.get("method"),
                scope.get("path"),
                self.deadline_s,
            )
            failure = (
                503,
                "request_timeout",
                f"the request did not finish within {self.deadline_s:g} s; retry later",
                {"retry_after": "1"},
            )
        except Exception:
            log.exception("unhandled error in %s %s", scope.get("method"), scope.get("path"))
            failure = (500, "internal_error", "internal error; it has been logged", {})
        if failure is None:
            return
        if started:  # half a response is out: only closing the connection can end it
            raise RuntimeError("response interrupted") from None
        status, code, message, headers = failure
        envelope = {"error": {"code": code, "message": message, "details": None}}
        await send_error(send, status, envelope, **headers)
