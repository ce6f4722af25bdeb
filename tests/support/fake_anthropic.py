"""A scripted fake of the Anthropic Messages API on loopback, for the real SDK to talk to.

The server and its behaviours are tests/support/fake_http.py's (`hang`, `slow`,
`delay:<seconds>`, `truncated`, `ok`, `empty`, `long`, `refusal`, `malformed`, an HTTP status);
this module writes them as the Messages API does: a `message` with text content and usage
(`cache_read_input_tokens` apart from `input_tokens`), `stop_reason: refusal`, the typed error
body.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from tests.support.fake_http import SLOW_SECONDS, FakeModelAPI, Recorded

__all__ = ["ERROR_TYPES", "SLOW_SECONDS", "FakeAnthropic", "Recorded"]

ERROR_TYPES = {
    401: "authentication_error",
    429: "rate_limit_error",
    500: "api_error",
    529: "overloaded_error",
}


@dataclass
class FakeAnthropic(FakeModelAPI):
    usage: Callable[[Recorded, str], dict[str, int]] | None = None
    """The reply's `usage` for a request and its text (a provider's billing, as bench/fold_cost.py
    models it); default: a quarter of the prompt's and of the text's characters."""

    def start(self) -> FakeAnthropic:
        super().start()
        return self

    def error(self, status: int) -> dict[str, Any]:
        kind = ERROR_TYPES.get(status, "api_error")
        return {"type": "error", "error": {"type": kind, "message": f"scripted {status}"}}

    def message(self, request: Recorded, text: str, stop: str = "end_turn") -> dict[str, Any]:
        usage = {"input_tokens": self.prompt_tokens(request), "output_tokens": len(text) // 4}
        if self.cached_tokens:
            usage["cache_read_input_tokens"] = self.cached_tokens
        return {
            "id": f"msg_{len(self.requests)}",
            "type": "message",
            "role": "assistant",
            "model": request.body.get("model", "fake"),
            "content": [{"type": "text", "text": text}] if text else [],
            "stop_reason": stop,
            "stop_sequence": None,
            "usage": self.usage(request, text) if self.usage else usage,
        }

    def refusal(self, request: Recorded) -> dict[str, Any]:
        return self.message(request, "", stop="refusal")
