"""What the sync and async clients share: configuration, the retry policy and how a response
becomes a result or a typed error."""

from __future__ import annotations

import os
from typing import Any, TypeVar

import httpx

from foldwise_client._calls import Call
from foldwise_client.errors import APIConnectionError, APITimeoutError, error_from_response

T = TypeVar("T")

VERSION = "0.1.0"
DEFAULT_BASE_URL = "http://127.0.0.1:8000"
# Above the server's own request deadline (60 s, then 503 request_timeout).
DEFAULT_TIMEOUT_S = 75.0
DEFAULT_MAX_RETRIES = 2
MAX_RETRY_AFTER_S = 10.0

# Transport errors where the request never left, and where it may have reached the server.
NOT_SENT = (httpx.ConnectError, httpx.ConnectTimeout, httpx.PoolTimeout)
MAYBE_SENT = (httpx.ReadError, httpx.WriteError, httpx.RemoteProtocolError, httpx.TimeoutException)


JSONL = "application/x-ndjson"


def base_url_or_env(base_url: str | None) -> str:
    return (base_url or os.environ.get("FOLDWISE_BASE_URL") or DEFAULT_BASE_URL).rstrip("/")


def headers(api_key: str | None) -> dict[str, str]:
    key = api_key if api_key is not None else os.environ.get("FOLDWISE_API_KEY")
    values = {"User-Agent": f"foldwise-client-python/{VERSION}", "Accept": "application/json"}
    if key:
        values["Authorization"] = f"Bearer {key}"
    return values


def request_args(call: Call[Any]) -> dict[str, Any]:
    args: dict[str, Any] = {"params": call.params}
    if call.jsonl_body:
        args["content"] = str(call.body).encode("utf-8")
        args["headers"] = {"Content-Type": JSONL}
    elif call.body is not None:
        args["json"] = call.body
    return args


def may_retry_error(call: Call[Any], error: httpx.TransportError) -> bool:
    """Connection errors only: one that happened before the request left (connect, pool) is
    always safe to retry; one after it may have reached the server only for idempotent calls
    (an append is, through its client_ids)."""
    if isinstance(error, NOT_SENT):
        return True
    return call.idempotent and isinstance(error, MAYBE_SENT)


def may_retry_response(response: httpx.Response) -> bool:
    """503: the server changed nothing (database unavailable, request timeout)."""
    return response.status_code == 503


def backoff_s(attempt: int, response: httpx.Response | None = None) -> float:
    """`Retry-After` when the server sent one (capped), else 0.25 s, 0.5 s, 1 s, …"""
    if response is not None:
        try:
            return min(max(float(response.headers["retry-after"]), 0.0), MAX_RETRY_AFTER_S)
        except (KeyError, ValueError):
            pass
    return min(0.25 * 2.0**attempt, MAX_RETRY_AFTER_S)


def connection_error(call: Call[Any], url: str, error: httpx.TransportError) -> APIConnectionError:
    """Names the server (the URL) that could not be reached: the first thing to check."""
    cls = APITimeoutError if isinstance(error, httpx.TimeoutException) else APIConnectionError
    problem = "no response from" if cls is APITimeoutError else "could not reach"
    cause = f"{type(error).__name__}: {error}"
    return cls(f"{call.method} {url}: {problem} the Foldwise server ({cause})")


def result(call: Call[T], response: httpx.Response, attempt: int = 0) -> T:
    if attempt and call.gone_after_retry_ok and response.status_code == 404:
        return call.parse(None)
    if response.status_code >= 400:
        raise error_from_response(response)
    if response.headers.get("content-type", "").startswith(JSONL):
        return call.parse(response.text)  # a session export: the JSONL text as it came
    body = response.json() if response.content else None
    return call.parse(body)
