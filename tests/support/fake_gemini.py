"""A scripted fake of Gemini's generateContent (`POST …/models/{model}:generateContent`) on
loopback, for the real google-genai SDK to talk to (its base URL is `base_url`).

The server and its behaviours are tests/support/fake_http.py's; this module writes them as
Gemini does: a candidate with text parts and `finishReason: STOP`, `usageMetadata` whose
`promptTokenCount` includes `cachedContentTokenCount`, a refusal as a candidate with no content
and `finishReason: SAFETY`, and `{"error": {"code", "message", "status"}}`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from tests.support.fake_http import FakeModelAPI, Recorded

STATUSES = {
    400: "INVALID_ARGUMENT",
    403: "PERMISSION_DENIED",
    429: "RESOURCE_EXHAUSTED",
    500: "INTERNAL",
    503: "UNAVAILABLE",
}


@dataclass
class FakeGemini(FakeModelAPI):
    thoughts_tokens: int = 0
    """Thinking tokens each healthy reply reports (billed as output)."""

    def start(self) -> FakeGemini:
        super().start()
        return self

    def error(self, status: int) -> dict[str, Any]:
        kind = STATUSES.get(status, "UNKNOWN")
        return {"error": {"code": status, "message": f"scripted {status}", "status": kind}}

    def message(self, request: Recorded, text: str) -> dict[str, Any]:
        candidate = {
            "content": {"role": "model", "parts": [{"text": text}] if text else []},
            "finishReason": "STOP",
            "index": 0,
        }
        return self._reply(request, candidate, len(text) // 4)

    def refusal(self, request: Recorded) -> dict[str, Any]:
        rating = {
            "category": "HARM_CATEGORY_DANGEROUS_CONTENT",
            "probability": "HIGH",
            "blocked": True,
        }
        candidate = {"finishReason": "SAFETY", "index": 0, "safetyRatings": [rating]}
        return self._reply(request, candidate, 0)

    def _reply(self, request: Recorded, candidate: dict[str, Any], output: int) -> dict[str, Any]:
        prompt = self.prompt_tokens(request) + self.cached_tokens
        usage = {
            "promptTokenCount": prompt,
            "candidatesTokenCount": output,
            "totalTokenCount": prompt + output + self.thoughts_tokens,
        }
        if self.cached_tokens:
            usage["cachedContentTokenCount"] = self.cached_tokens
        if self.thoughts_tokens:
            usage["thoughtsTokenCount"] = self.thoughts_tokens
        return {
            "candidates": [candidate],
            "usageMetadata": usage,
            "modelVersion": request.path.rsplit("/", 1)[-1].split(":")[0],
            "responseId": f"resp_{len(self.requests)}",
        }
