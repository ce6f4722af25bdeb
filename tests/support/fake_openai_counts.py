"""A scripted fake of the providers' token count endpoints on loopback, for the real SDKs.

`FakeCounts` is tests/support/fake_anthropic.py's server (its own thread and event loop,
enough HTTP/1.1 for the SDKs, every request recorded) answering two paths instead of the
Messages API:

- Anthropic `POST /v1/messages/count_tokens` → `{"input_tokens": n}`;
- OpenAI `POST /v1/responses/input_tokens` → `{"object": "response.input_tokens",
  "input_tokens": n}` (an OpenAI client's base URL is `openai_base_url`, ending in /v1).

`n` is `count(request)`: by default a function of the request body, so a changed message
gets another count. Behaviours, taken from `script` in order, then `default`: `ok`,
`delay:<seconds>` (then ok), `hang` (both the server's own), `malformed` (a truncated JSON
body), `no_count` (valid JSON without `input_tokens`), or an HTTP status (`429`, `500`, …)
with the provider's error body.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass

from tests.support.fake_anthropic import ERROR_TYPES, FakeAnthropic, Recorded

ANTHROPIC_COUNT_PATH = "/v1/messages/count_tokens"
OPENAI_COUNT_PATH = "/v1/responses/input_tokens"
OPENAI_ERROR_CODES = {429: "rate_limit_exceeded", 500: "server_error"}


def body_size_count(request: Recorded) -> int:
    """A deterministic stand-in for a tokenizer: a quarter of the body's JSON length."""
    return len(json.dumps(request.body)) // 4 + 1


@dataclass
class FakeCounts(FakeAnthropic):
    count: Callable[[Recorded], int] = body_size_count

    @property
    def openai_base_url(self) -> str:
        return f"{self.base_url}/v1"

    def start(self) -> FakeCounts:
        super().start()
        return self

    async def _respond(
        self, behaviour: str, request: Recorded
    ) -> tuple[int, dict[str, str], bytes]:
        path = request.path.split("?")[0]
        openai = path == OPENAI_COUNT_PATH
        if behaviour == "malformed":
            return 200, {}, b'{"input_tokens": 1'
        if behaviour == "no_count":
            return 200, {}, b'{"unexpected": true}'
        if behaviour.isdigit():
            return _error(int(behaviour), openai=openai)
        if path not in (ANTHROPIC_COUNT_PATH, OPENAI_COUNT_PATH):
            return _error(404, openai=openai)
        reply: dict[str, object] = {"input_tokens": self.count(request)}
        if openai:
            reply = {"object": "response.input_tokens", **reply}
        return 200, {}, json.dumps(reply).encode()


def _error(status: int, *, openai: bool) -> tuple[int, dict[str, str], bytes]:
    extra = {"retry-after": "3600"} if status == 429 else {}
    message = f"scripted {status}"
    if openai:
        code = OPENAI_ERROR_CODES.get(status, "error")
        error: dict[str, object] = {
            "error": {"message": message, "type": code, "param": None, "code": code}
        }
    else:
        kind = ERROR_TYPES.get(status, "api_error")
        error = {"type": "error", "error": {"type": kind, "message": message}}
    return status, extra, json.dumps(error).encode()
