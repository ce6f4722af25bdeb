"""A proxy in front of a real Foldwise server that injects scripted faults, so the retry
tests see what a client sees when a network or server fails at the worst moment."""

from __future__ import annotations

import json
import threading
import time
from dataclasses import dataclass

import httpx

from tests.pyclient.loopback import Drop, LoopbackServer

# drop_response: forward, let the server do the work, then close without answering.
# reset: close without forwarding. unavailable: answer 503 without forwarding.
# html_502: answer a gateway's HTML page. stall: wait `stall_s`, then forward.
Fault = str


@dataclass
class Rule:
    method: str
    path_contains: str
    faults: list[Fault]


class FaultProxy(LoopbackServer):
    def __init__(self, upstream: str, stall_s: float = 1.0) -> None:
        super().__init__()
        self.upstream = upstream
        self.stall_s = stall_s
        self.rules: list[Rule] = []
        self.received: list[tuple[str, str]] = []
        self.forwarded: list[tuple[str, str]] = []
        self._lock = threading.Lock()

    def inject(self, method: str, path_contains: str, *faults: Fault) -> None:
        """The next requests matching `method` and `path_contains` meet `faults`, in order."""
        with self._lock:
            self.rules.append(Rule(method, path_contains, list(faults)))

    def count(self, method: str, path_contains: str) -> int:
        return sum(1 for m, p in self.received if m == method and path_contains in p)

    def _next_fault(self, method: str, path: str) -> Fault | None:
        with self._lock:
            self.received.append((method, path))
            for rule in self.rules:
                if rule.method == method and rule.path_contains in path and rule.faults:
                    return rule.faults.pop(0)
        return None

    def handle(
        self, method: str, path: str, headers: dict[str, str], body: bytes
    ) -> tuple[int, dict[str, str], bytes]:
        fault = self._next_fault(method, path)
        if fault == "reset":
            raise Drop
        if fault == "unavailable":
            envelope = {"error": {"code": "database_unavailable", "message": "try again"}}
            payload = json.dumps(envelope).encode()
            return 503, {"Content-Type": "application/json", "Retry-After": "0"}, payload
        if fault == "html_502":
            return 502, {"Content-Type": "text/html"}, b"<html>Bad Gateway</html>"
        if fault == "stall":
            time.sleep(self.stall_s)
        forward = {k: v for k, v in headers.items() if k.lower() not in ("host", "content-length")}
        response = httpx.request(
            method, self.upstream + path, headers=forward, content=body, timeout=60
        )
        with self._lock:
            self.forwarded.append((method, path))
        if fault == "drop_response":
            raise Drop
        keep = {
            k: v
            for k, v in response.headers.items()
            if k.lower() in ("content-type", "retry-after")
        }
        return response.status_code, keep, response.content
