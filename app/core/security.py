"""API keys → tenants (docs/reference.md §Auth), and the request body size limit.

`FOLDWISE_API_KEYS="tenant-a:key1,tenant-b:sha256:<64 hex>"`. Keys are compared as sha256
digests with `hmac.compare_digest`, against every configured key, so neither the timing nor
an early exit tells an attacker which prefix or which tenant matched.
"""

from __future__ import annotations

import hashlib
import hmac
import ipaddress
import re
from dataclasses import dataclass

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from app.core.errors import PayloadTooLarge, Unauthorized
from app.core.guards import send_error

OPEN_TENANT = "default"
OPEN_PATHS = frozenset({"/healthz", "/readyz", "/metrics", "/docs", "/openapi.json", "/redoc"})
# The API docs' JavaScript and CSS (app/api/docs.py): public, like the pages that load them.
DOCS_ASSETS = "/docs/assets"
_HEX_DIGEST = re.compile(r"^[0-9a-fA-F]{64}$")
_TENANT = re.compile(r"^[A-Za-z0-9_.@-]{1,128}$")


class ApiKeyConfigError(ValueError):
    """FOLDWISE_API_KEYS cannot be parsed; the message says which entry and why."""


@dataclass(frozen=True, slots=True)
class ApiKey:
    tenant: str
    digest: bytes  # sha256 of the key


def _digest(secret: str) -> bytes:
    return hashlib.sha256(secret.encode()).digest()


def parse_api_keys(raw: str) -> tuple[ApiKey, ...]:
    """Parse the comma-separated `tenant:key` / `tenant:sha256:<hex>` list.

    Raises ApiKeyConfigError naming the bad entry (by position, never echoing the key).
    """
    keys: list[ApiKey] = []
    for position, entry in enumerate(raw.split(","), start=1):
        entry = entry.strip()
        if not entry:
            continue
        tenant, sep, secret = entry.partition(":")
        tenant = tenant.strip()
        if not sep or not secret:
            raise ApiKeyConfigError(f"FOLDWISE_API_KEYS entry {position}: expected tenant:key")
        if not _TENANT.match(tenant):
            raise ApiKeyConfigError(
                f"FOLDWISE_API_KEYS entry {position}: tenant must match {_TENANT.pattern}"
            )
        if secret.startswith("sha256:"):
            hex_digest = secret[len("sha256:") :]
            if not _HEX_DIGEST.match(hex_digest):
                raise ApiKeyConfigError(
                    f"FOLDWISE_API_KEYS entry {position}: sha256: needs 64 hex characters"
                )
            keys.append(ApiKey(tenant, bytes.fromhex(hex_digest)))
        else:
            keys.append(ApiKey(tenant, _digest(secret)))
    return tuple(keys)


class KeyRing:
    """Resolves a bearer token to its tenant; empty ring = open mode."""

    def __init__(self, keys: tuple[ApiKey, ...]) -> None:
        self._keys = keys

    @classmethod
    def from_config(cls, raw: str) -> KeyRing:
        return cls(parse_api_keys(raw))

    @property
    def is_open(self) -> bool:
        return not self._keys

    def tenant_for(self, token: str) -> str | None:
        presented = _digest(token)
        found: str | None = None
        for key in self._keys:  # no early exit: every key is compared
            if hmac.compare_digest(presented, key.digest) and found is None:
                found = key.tenant
        return found


def bearer_token(authorization: str | None) -> str | None:
    if not authorization:
        return None
    scheme, _, token = authorization.partition(" ")
    token = token.strip()
    return token if scheme.lower() == "bearer" and token else None


def resolve_tenant(keyring: KeyRing, authorization: str | None) -> str:
    """The tenant of an `Authorization: Bearer <key>` header (scheme case-insensitive);
    "default" in open mode; Unauthorized otherwise."""
    if keyring.is_open:
        return OPEN_TENANT
    token = bearer_token(authorization)
    if token is None:
        raise Unauthorized("missing API key: send 'Authorization: Bearer <key>'")
    tenant = keyring.tenant_for(token)
    if tenant is None:
        raise Unauthorized("invalid API key")
    return tenant


class AuthMiddleware:
    """Authenticates before anything reads the body: an unauthenticated request gets its 401
    without its JSON being parsed or validated. The tenant goes to `scope["state"]`."""

    def __init__(self, app: ASGIApp, keyring: KeyRing, open_prefixes: tuple[str, ...] = ()) -> None:
        """`open_prefixes`: paths of public pages (the Inspector's: they hold no data; the
        API they call is not public)."""
        self.app = app
        self.keyring = keyring
        self.open_prefixes = tuple(p.rstrip("/") for p in open_prefixes)

    def _open_page(self, path: str) -> bool:
        return any(path == p or path.startswith(p + "/") for p in self.open_prefixes)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        path = scope.get("path", "")
        if (
            scope["type"] != "http"
            or path in OPEN_PATHS
            or path.startswith(DOCS_ASSETS + "/")
            or self._open_page(path)
        ):
            await self.app(scope, receive, send)
            return
        header = dict(scope["headers"]).get(b"authorization")
        try:
            tenant = resolve_tenant(self.keyring, header.decode("latin-1") if header else None)
        except Unauthorized as exc:
            await send_error(send, 401, exc.envelope(), www_authenticate="Bearer")
            return
        scope.setdefault("state", {})["tenant"] = tenant
        await self.app(scope, receive, send)


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


class BodySizeLimitMiddleware:
    """413 for bodies over `max_bytes`: by Content-Length up front, or while streaming.

    Pure ASGI (no BaseHTTPMiddleware) so the body is counted chunk by chunk and never
    buffered here; a chunked upload without Content-Length is cut off at the limit.
    """

    def __init__(self, app: ASGIApp, max_bytes: int) -> None:
        self.app = app
        self.max_bytes = max_bytes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        declared = dict(scope["headers"]).get(b"content-length")
        if declared is not None and declared.isdigit() and int(declared) > self.max_bytes:
            await self._reject(send)
            return
        received = 0
        exceeded = False
        rejected = False

        async def limited_receive() -> Message:
            nonlocal received, exceeded
            message = await receive()
            if message["type"] == "http.request":
                received += len(message.get("body", b""))
                if received > self.max_bytes:
                    exceeded = True
                    raise PayloadTooLarge(self._message(), {"max_bytes": self.max_bytes})
            return message

        async def guarded_send(message: Message) -> None:
            # Whatever the app answers after the limit tripped (the framework may turn the
            # error into a generic 400), the client gets the 413 envelope instead.
            nonlocal rejected
            if not exceeded:
                await send(message)
            elif not rejected:
                rejected = True
                await self._reject(send)

        try:
            await self.app(scope, limited_receive, guarded_send)
        except PayloadTooLarge:
            if not rejected:
                rejected = True
                await self._reject(send)

    def _message(self) -> str:
        return f"request body exceeds {self.max_bytes} bytes"

    async def _reject(self, send: Send) -> None:
        envelope = PayloadTooLarge(self._message(), {"max_bytes": self.max_bytes}).envelope()
        await send_error(send, 413, envelope, connection="close")
