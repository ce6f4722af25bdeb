"""Fake model providers on loopback for the real SDKs (no network): the Anthropic Messages
API (`/v1/messages`), the OpenAI Responses API (`/v1/responses`), Chat Completions
(`/v1/chat/completions`) and Gemini's generateContent (`/v1beta/models/{model}:generateContent`;
like Gemini 3, it refuses a function call sent back without the `thoughtSignature` it came
with). Each records the request bodies it got and answers by one rule:
after a tool result, report it; asked about the weather with tools on offer, call
`get_weather`; otherwise acknowledge the last user text."""

from __future__ import annotations

import base64
import json
import threading
import uuid
from typing import Any

from tests.pyclient.loopback import LoopbackServer

JSON = {"Content-Type": "application/json"}
CITY_ARGS = json.dumps({"city": "Paris"})


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return " ".join(str(p.get("text", "")) for p in content if isinstance(p, dict))
    return ""


def signature_bytes(signature: str) -> bytes:
    """A signature's bytes, from either base64 alphabet (the SDK dumps the URL-safe one)."""
    return base64.b64decode(signature.replace("-", "+").replace("_", "/"))


def signed(part: dict[str, Any]) -> bytes | None:
    signature = part.get("thoughtSignature")
    return signature_bytes(signature) if isinstance(signature, str) else None


def _id(prefix: str) -> str:
    return f"{prefix}_{uuid.uuid4().hex[:16]}"


class FakeProviders(LoopbackServer):
    def __init__(self) -> None:
        super().__init__()
        self.requests: dict[str, list[dict[str, Any]]] = {
            "messages": [],
            "responses": [],
            "chat": [],
            "gemini": [],
        }
        self.signatures: dict[str, str] = {}  # the signature each Gemini call came with
        self._lock = threading.Lock()

    def handle(
        self, method: str, path: str, headers: dict[str, str], body: bytes
    ) -> tuple[int, dict[str, str], bytes]:
        request = json.loads(body or b"{}")
        route = path.split("?", 1)[0]
        if method == "POST" and route == "/v1/messages":
            kind, answer = "messages", self._anthropic(request)
        elif method == "POST" and route == "/v1/responses":
            kind, answer = "responses", self._responses(request)
        elif method == "POST" and route == "/v1/chat/completions":
            kind, answer = "chat", self._chat(request)
        elif method == "POST" and route.endswith(":generateContent"):
            with self._lock:
                self.requests["gemini"].append(request)
            refused = self._unsigned(request)
            if refused:
                error = {"error": {"code": 400, "message": refused, "status": "INVALID_ARGUMENT"}}
                return 400, JSON, json.dumps(error).encode()
            return 200, JSON, json.dumps(self._gemini(request)).encode()
        else:
            return 404, JSON, b'{"error": {"message": "no such route", "type": "not_found"}}'
        with self._lock:
            self.requests[kind].append(request)
        return 200, JSON, json.dumps(answer).encode()

    def _anthropic(self, request: dict[str, Any]) -> dict[str, Any]:
        last = request["messages"][-1]
        blocks = last["content"] if isinstance(last["content"], list) else []
        result = next((b for b in blocks if b.get("type") == "tool_result"), None)
        if result is not None:
            content: list[dict[str, Any]] = [
                {"type": "text", "text": f"The tool says: {_text(result.get('content'))}"}
            ]
        elif request.get("tools") and "weather" in _text(last["content"]).lower():
            content = [
                {
                    "type": "tool_use",
                    "id": _id("toolu"),
                    "name": "get_weather",
                    "input": {"city": "Paris"},
                }
            ]
        else:
            content = [{"type": "text", "text": f"Noted: {_text(last['content'])[:80]}"}]
        if request.get("context_management") and "compact now" in _text(last["content"]):
            # The Messages API's server-side compaction: the block first, then the answer.
            summary = f"Summary of {len(request['messages'])} messages: notes were taken."
            content.insert(0, {"type": "compaction", "content": summary})
        return {
            "id": _id("msg"),
            "type": "message",
            "role": "assistant",
            "model": request["model"],
            "content": content,
            "stop_reason": "tool_use" if content[0]["type"] == "tool_use" else "end_turn",
            "stop_sequence": None,
            "usage": {"input_tokens": 100, "output_tokens": 10},
        }

    def _responses(self, request: dict[str, Any]) -> dict[str, Any]:
        items = request["input"]
        last = items[-1] if isinstance(items, list) else {"role": "user", "content": items}
        if last.get("type") == "function_call_output":
            output = [self._message(f"The tool says: {last['output']}")]
        elif request.get("tools") and "weather" in _text(last.get("content")).lower():
            output = [
                {
                    "type": "function_call",
                    "id": _id("fc"),
                    "call_id": _id("call"),
                    "name": "get_weather",
                    "arguments": CITY_ARGS,
                    "status": "completed",
                }
            ]
        else:
            output = [self._message(f"Noted: {_text(last.get('content'))[:80]}")]
        return {
            "id": _id("resp"),
            "object": "response",
            "created_at": 0,
            "status": "completed",
            "model": request["model"],
            "output": output,
            "parallel_tool_calls": True,
            "tool_choice": "auto",
            "tools": request.get("tools") or [],
            "instructions": request.get("instructions"),
            "error": None,
            "incomplete_details": None,
            "metadata": {},
            "usage": {
                "input_tokens": 100,
                "output_tokens": 10,
                "total_tokens": 110,
                "input_tokens_details": {"cached_tokens": 0},
                "output_tokens_details": {"reasoning_tokens": 0},
            },
        }

    @staticmethod
    def _message(text: str) -> dict[str, Any]:
        return {
            "type": "message",
            "id": _id("msg"),
            "status": "completed",
            "role": "assistant",
            "content": [{"type": "output_text", "text": text, "annotations": []}],
        }

    def _chat(self, request: dict[str, Any]) -> dict[str, Any]:
        last = request["messages"][-1]
        message: dict[str, Any] = {"role": "assistant", "content": None}
        if last["role"] == "tool":
            message["content"] = f"The tool says: {_text(last['content'])}"
        elif request.get("tools") and "weather" in _text(last.get("content")).lower():
            message["tool_calls"] = [
                {
                    "id": _id("call"),
                    "type": "function",
                    "function": {"name": "get_weather", "arguments": CITY_ARGS},
                }
            ]
        else:
            message["content"] = f"Noted: {_text(last.get('content'))[:80]}"
        return {
            "id": _id("chatcmpl"),
            "object": "chat.completion",
            "created": 0,
            "model": request["model"],
            "choices": [
                {
                    "index": 0,
                    "message": message,
                    "logprobs": None,
                    "finish_reason": "tool_calls" if "tool_calls" in message else "stop",
                }
            ],
            "usage": {"prompt_tokens": 100, "completion_tokens": 10, "total_tokens": 110},
        }

    def _unsigned(self, request: dict[str, Any]) -> str | None:
        """Gemini 3's rule: a function call of the model goes back with its signature."""
        for content in request.get("contents", []):
            for part in content.get("parts", []):
                call = part.get("functionCall")
                expected = self.signatures.get(call["name"]) if call else None
                if expected is not None and signed(part) != signature_bytes(expected):
                    return f"Function call is missing a thought_signature: {call['name']}"
        return None

    def _gemini(self, request: dict[str, Any]) -> dict[str, Any]:
        last = request["contents"][-1]
        answer = next(
            (p["functionResponse"] for p in last["parts"] if "functionResponse" in p), None
        )
        text = " ".join(p.get("text", "") for p in last["parts"])
        parts: list[dict[str, Any]]
        if answer is not None:
            parts = [{"text": f"The tool says: {answer['response'].get('output')}"}]
        elif request.get("tools") and "weather" in text.lower():
            signature = base64.b64encode(uuid.uuid4().bytes).decode()
            self.signatures["get_weather"] = signature
            call = {"name": "get_weather", "args": {"city": "Paris"}}
            parts = [{"functionCall": call, "thoughtSignature": signature}]
        else:
            parts = [{"text": f"Noted: {text[:80]}"}]
        return {
            "candidates": [
                {"content": {"role": "model", "parts": parts}, "finishReason": "STOP", "index": 0}
            ],
            "usageMetadata": {"promptTokenCount": 100, "candidatesTokenCount": 10},
            "modelVersion": "gemini-3-flash-preview",
        }


class CompactingProviders(FakeProviders):
    """FakeProviders plus the Responses API's standalone compaction, `POST
    /v1/responses/compact` (`client.responses.compact`, a `CompactedResponse`): it takes
    `input` or a `previous_response_id` (of a response this fake made), and answers as the
    API does (its reference example): every user message of that window, in order, as
    `input_text` messages, then one `{"type": "compaction", "encrypted_content", "id"}` item.

    `/v1/responses` also checks what the API checks of a compaction item in its input: only
    an item this fake issued, byte for byte (the content is encrypted; altered, it is a 400).
    Requests are recorded under "compact" (and, as before, "responses")."""

    def __init__(self) -> None:
        super().__init__()
        self.requests["compact"] = []
        self.issued: dict[str, dict[str, Any]] = {}  # compaction id -> the item as issued
        self.compacted: list[dict[str, Any]] = []  # each CompactedResponse answered, in order
        self._windows: dict[str, list[dict[str, Any]]] = {}  # response id -> input + output

    def handle(
        self, method: str, path: str, headers: dict[str, str], body: bytes
    ) -> tuple[int, dict[str, str], bytes]:
        route = path.split("?", 1)[0]
        request = json.loads(body or b"{}")
        if method == "POST" and route == "/v1/responses/compact":
            with self._lock:
                self.requests["compact"].append(request)
            return self._compact(request)
        if method == "POST" and route == "/v1/responses":
            problem = self._foreign_compaction(request.get("input"))
            if problem is not None:
                with self._lock:
                    self.requests["responses"].append(request)
                error = {"message": problem, "type": "invalid_request_error", "param": "input"}
                return 400, JSON, json.dumps({"error": error}).encode()
        return super().handle(method, path, headers, body)

    def _responses(self, request: dict[str, Any]) -> dict[str, Any]:
        answer = super()._responses(request)
        given = request["input"]
        window = list(given) if isinstance(given, list) else [{"role": "user", "content": given}]
        with self._lock:
            self._windows[answer["id"]] = window + answer["output"]
        return answer

    def _foreign_compaction(self, items: Any) -> str | None:
        for index, item in enumerate(items if isinstance(items, list) else []):
            if isinstance(item, dict) and item.get("type") == "compaction":
                issued = self.issued.get(str(item.get("id")))
                if issued is None or item != issued:
                    return f"input[{index}]: not a compaction item this API issued: {item!r}"
        return None

    def _compact(self, request: dict[str, Any]) -> tuple[int, dict[str, str], bytes]:
        if isinstance(request.get("input"), list):
            window: list[dict[str, Any]] = request["input"]
        elif isinstance(request.get("input"), str):
            window = [{"role": "user", "content": request["input"]}]
        elif request.get("previous_response_id") in self._windows:
            window = self._windows[request["previous_response_id"]]
        else:
            error = {"message": "input or a known previous_response_id is required"}
            return 400, JSON, json.dumps({"error": error | {"type": "invalid_request"}}).encode()
        problem = self._foreign_compaction(window)
        if problem is not None:
            error = {"message": problem, "type": "invalid_request_error", "param": "input"}
            return 400, JSON, json.dumps({"error": error}).encode()
        kept = [
            {
                "type": "message",
                "role": "user",
                "content": [{"type": "input_text", "text": _text(item.get("content"))}],
            }
            for item in window
            if item.get("role") == "user" and item.get("type", "message") == "message"
        ]
        item = {
            "id": _id("cmp"),
            "type": "compaction",
            "encrypted_content": "gAAAAB" + uuid.uuid4().hex * 4,
        }
        answer = {
            "id": _id("resp"),
            "object": "response.compaction",
            "created_at": 0,
            "output": [*kept, item],
            "usage": {
                "input_tokens": 100 * len(window),
                "input_tokens_details": {"cached_tokens": 0, "cache_write_tokens": 0},
                "output_tokens": 50,
                "output_tokens_details": {"reasoning_tokens": 0},
                "total_tokens": 100 * len(window) + 50,
            },
        }
        with self._lock:
            self.issued[item["id"]] = item
            self.compacted.append(answer)
        return 200, JSON, json.dumps(answer).encode()
