"""The words of redaction, as data: which names say "secret", which values say "not one"."""

from __future__ import annotations

# Secret words that anchor the scan for `name = value` pairs (a fast literal scan).
NAME_ANCHORS = ("pass", "pwd", "secret", "token", "credential", "key")
NAME_CHARS = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-"
SECRET_PARTS = {
    "password", "passwords", "passwd", "passphrase", "pass", "pwd", "secret", "secrets",
    "token", "tokens", "credential", "credentials", "apikey", "apikeys", "privatekey",
    "secretkey", "accesskey",
}  # fmt: skip
# Words run together in one part (`PGPASSWORD`, `GITHUBTOKEN`); not `pass` (`bypass`, `compass`).
SECRET_ENDINGS = (
    "password", "passwd", "passphrase", "secret", "token", "credential", "credentials",
    "apikey", "privatekey", "secretkey", "accesskey",
)  # fmt: skip
# Names whose value is chosen by a person (a passphrase may be words): `password`, `PGPASSWORD`.
PASSWORD_PARTS = ("password", "passwd", "passphrase", "pwd")
KEY_QUALIFIERS = {
    "api", "access", "private", "secret", "signing", "encryption", "master", "account",
    "session", "shared", "auth", "client", "storage", "license", "deploy",
}  # fmt: skip
# A name ending in one of these describes a secret (its name, length, lifetime, file…).
META_PARTS = {
    "name", "names", "id", "ids", "ttl", "length", "len", "count", "type", "types", "file",
    "files", "path", "paths", "dir", "url", "uri", "endpoint", "host", "ref", "env", "var",
    "field", "header", "expiry", "expires", "expiration", "lifetime", "timeout", "age", "size",
    "limit", "max", "min", "version", "kind", "format", "algorithm", "algo", "mode", "policy",
    "provider", "source", "prefix", "label", "arn", "enabled", "required", "regex", "pattern",
    "hint", "title", "text", "message", "description", "help", "placeholder", "error", "prompt",
    "at", "date", "time", "days", "hours", "minutes", "seconds", "ms", "rotation", "store",
    "manager", "class", "usage", "budget", "index", "position", "offset", "estimate", "rate",
}  # fmt: skip
SHELL_NAMES = {"pwd", "oldpwd"}  # the shell's working directories

WORDS_NOT_SECRET = {
    "none", "null", "nil", "true", "false", "''", '""', "<redacted>", "***", "xxx", "changeme",
    "password", "secret", "token", "required", "optional", "string", "str", "pass", "passwd",
    "pw", "pwd",
}  # fmt: skip
# What a password field says instead of holding one: a lower-case word of 8+ letters after
# `password:` is taken as a passphrase unless it is one of these or reads as a state or a
# description (`…ed`, `…ing`, `…able`, …); shorter words never are.
PASSWORD_STATES = {
    "incorrect", "mismatch", "forgotten", "sensitive", "nullable", "readonly", "writeonly",
    "plaintext", "environment",
}  # fmt: skip
PASSWORD_STATE_ENDINGS = ("ed", "ing", "able", "ible", "tion", "ment", "ness")
ALPHABET_RUNS = ("abcdef", "ABCDEF", "012345")
REFERENCE_OPENINGS = (
    "$", "%", "<", "{", "[", "(", "@", "!", "*", "#", "os.", "settings.", "env.", "process.env",
    "config.", "self.", "this.", "secrets.", "vault:",
)  # fmt: skip
# Bytes only a certificate or public key holds in its middle: the OIDs of X.509 attributes
# (`2.5.4.x`) and extensions (`2.5.29.x`), PKIX (`1.3.6.1.5.5.7`), and a signature's algorithm.
CERTIFICATE_MARKERS = (
    b"\x06\x03\x55\x04",
    b"\x06\x03\x55\x1d",
    b"\x06\x08\x2b\x06\x01\x05\x05\x07",
    b"\x06\x09\x2a\x86\x48\x86\xf7\x0d\x01\x01",
    b"\x06\x08\x2a\x86\x48\xce\x3d\x04\x03",
)
