"""The running request's deadline, seen by its work wherever that work runs.

The request guard (guards.py) answers 503 at the deadline, but it can only cancel what
awaits: CPU work handed to a worker thread would run on after the answer. The guard puts the
deadline in a context variable, which `asyncio.to_thread` and Starlette's threadpool copy into
the worker, and long loops call `check_deadline()` so the work stops with its request.
Outside a request (the CLI, tests, background work) there is no deadline and it never fires.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar

from app.core.errors import RequestTimeout

_DEADLINE: ContextVar[float | None] = ContextVar("foldwise_request_deadline", default=None)


@contextmanager
def deadline_after(seconds: float) -> Iterator[None]:
    """Work started inside this block (threads included) stops `seconds` from now."""
    token = _DEADLINE.set(time.monotonic() + seconds)
    try:
        yield
    finally:
        _DEADLINE.reset(token)


def check_deadline() -> None:
    """Raise RequestTimeout once the current request's deadline has passed (cheap: a context
    variable read and a clock read, so loops may call it once per step)."""
    deadline = _DEADLINE.get()
    if deadline is not None and time.monotonic() > deadline:
        raise RequestTimeout("the request passed its deadline; its work was stopped")
