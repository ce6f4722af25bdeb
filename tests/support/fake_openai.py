"""A scripted fake of OpenAI's Responses (`POST …/responses`) and Chat Completions
(`POST …/chat/completions`) APIs on loopback, for the real `openai` SDK to talk to; the client's
base URL is `openai_base_url` (ending in /v1, as OpenAI's own).

The server and its behaviours are tests/support/fake_http.py's; this module writes them as
OpenAI does: a response whose message has `output_text` or `refusal` parts, a chat completion
whose message has `content` or `refusal`, usage with the cached tokens among the prompt's, and
`{"error": {"message", "type", "param", "code"}}`. `compatible=True` writes errors as vLLM and
LiteLLM do (the status repeated as a numeric `code`, the exception name as `type`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from tests.support.fake_http import FakeModelAPI, Recorded

# OpenAI's (type, code) of a status.
OPENAI_ERRORS = {
    401: ("invalid_request_error", "invalid_api_key"),
    429: ("requests", "rate_limit_exceeded"),
    500: ("server_error", None),
    503: ("server_error", None),
}
COMPATIBLE_ERRORS = {429: "RateLimitError", 500: "InternalServerError"}
REFUSAL = "I'm sorry, I can't help with that."


@dataclass
class FakeOpenAI(FakeModelAPI):
    compatible: bool = False
    billing: Callable[[Recorded], tuple[int, int]] | None = None
    """(uncached, cached) prompt tokens of a request (a provider's automatic prompt cache, as
    bench/fold_cost.py models it); default: a quarter of the prompt's text, `cached_tokens`."""

    @property
    def openai_base_url(self) -> str:
        return f"{self.base_url}/v1"

    def start(self) -> FakeOpenAI:
        super().start()
        return self

    def error(self, status: int) -> dict[str, Any]:
        message = f"scripted {status}"
        if self.compatible:
            kind = COMPATIBLE_ERRORS.get(status, "BadRequestError")
            return {"error": {"message": message, "type": kind, "param": None, "code": status}}
        kind, code = OPENAI_ERRORS.get(status, ("invalid_request_error", None))
        return {"error": {"message": message, "type": kind, "param": None, "code": code}}

    def message(self, request: Recorded, text: str) -> dict[str, Any]:
        if request.path.endswith("/chat/completions"):
            return self._completion(request, {"content": text, "refusal": None}, len(text))
        return self._response(request, {"type": "output_text", "text": text, "annotations": []})

    def refusal(self, request: Recorded) -> dict[str, Any]:
        if request.path.endswith("/chat/completions"):
            return self._completion(request, {"content": None, "refusal": REFUSAL}, len(REFUSAL))
        return self._response(request, {"type": "refusal", "refusal": REFUSAL})

    def _prompt(self, request: Recorded) -> tuple[int, int]:
        """(all, cached) prompt tokens: OpenAI counts the cached ones among the prompt's."""
        if self.billing is not None:
            uncached, cached = self.billing(request)
        else:
            uncached, cached = self.prompt_tokens(request), self.cached_tokens
        return uncached + cached, cached

    def _completion(self, request: Recorded, message: dict[str, Any], chars: int) -> dict[str, Any]:
        (prompt, cached), output = self._prompt(request), chars // 4
        usage = {
            "prompt_tokens": prompt,
            "completion_tokens": output,
            "total_tokens": prompt + output,
            "prompt_tokens_details": {"cached_tokens": cached},
        }
        choice = {
            "index": 0,
            "message": {"role": "assistant", **message},
            "finish_reason": "stop",
            "logprobs": None,
        }
        return {
            "id": f"chatcmpl-{len(self.requests)}",
            "object": "chat.completion",
            "created": 0,
            "model": request.body.get("model", "fake"),
            "choices": [choice],
            "usage": usage,
        }

    def _response(self, request: Recorded, part: dict[str, Any]) -> dict[str, Any]:
        prompt, cached = self._prompt(request)
        output = len(part.get("text") or part.get("refusal") or "") // 4
        message = {
            "type": "message",
            "id": f"msg_{len(self.requests)}",
            "status": "completed",
            "role": "assistant",
            "content": [part],
        }
        return {
            "id": f"resp_{len(self.requests)}",
            "object": "response",
            "created_at": 0,
            "status": "completed",
            "model": request.body.get("model", "fake"),
            "output": [message],
            "parallel_tool_calls": True,
            "tool_choice": "auto",
            "tools": [],
            "usage": {
                "input_tokens": prompt,
                "input_tokens_details": {"cached_tokens": cached},
                "output_tokens": output,
                "output_tokens_details": {"reasoning_tokens": 0},
                "total_tokens": prompt + output,
            },
        }
