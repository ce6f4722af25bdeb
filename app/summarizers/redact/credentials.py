"""Credentials in context, each taken by a pattern and a check of what it found: URL passwords,
curl's `-u`, HTTP authorization, SAS signatures, AWS keys, and the entropy fallback (a random
value alone on an env line, a 40-character AWS secret)."""

from __future__ import annotations

import re

import app.summarizers.redact.patterns as patterns
import app.summarizers.redact.words as words
from app.summarizers.redact.base import compiled
from app.summarizers.redact.values import (
    AWS_EXAMPLE,
    NAME_PARTS,
    has_digit,
    is_benign_value,
    is_random,
    is_reference,
    shannon_entropy,
)

AWS_SECRET_MIN_ENTROPY = 4.5
_DOTTED_NAME = compiled(r"[A-Za-z_]\w{0,80}(?:\.[A-Za-z_]\w{0,80}){1,20}")
_BLOB_LINE_BEFORE = compiled(rf"[A-Za-z0-9+/=]{{40}}{patterns.NL}\Z")
_BLOB_LINE_AFTER = compiled(rf"={{0,2}}{patterns.NL}(?:[A-Za-z0-9+/]{{40}}|-----END )")
_CURL_BEFORE = compiled(r"(?<![\w\-])curl[ \t](?:[^\r\n;|&\\]|\\[^n]){0,400}+\Z")


def url_password(match: re.Match[str]) -> tuple[int, int] | None:
    password = match.group("s")
    head, slash, _ = password.partition("/")
    if slash and head.isdigit():  # `host:8080/path/@user`: a port and a path, no password
        return None
    if is_reference(password) or password.lower() in words.WORDS_NOT_SECRET:
        return None
    return match.span("s")


def if_not_benign(match: re.Match[str]) -> tuple[int, int] | None:
    return None if is_benign_value(match.group("s")) else match.span("s")


def if_not_reference(match: re.Match[str]) -> tuple[int, int] | None:
    return None if is_reference(match.group("s")) else match.span("s")


def if_not_example(match: re.Match[str]) -> tuple[int, int] | None:
    return None if AWS_EXAMPLE.fullmatch(match.group()) else match.span()


def if_random(match: re.Match[str]) -> tuple[int, int] | None:
    value = match.group("s")
    if AWS_EXAMPLE.fullmatch(value) or not has_digit(value):
        return None
    return match.span("s") if is_random(value) else None


def curl_password(match: re.Match[str]) -> tuple[int, int] | None:
    """`-u user:pw` / `--user user:pw` of a curl command on the same line (not `docker -u
    1000:1000`, not `git push -u origin main:main`)."""
    text, start = match.string, match.start()
    if start == 0 or text[start - 1] not in " \t":
        return None
    line = text.rfind("\n", max(0, start - 400), start) + 1 or max(0, start - 400)
    if not _CURL_BEFORE.search(text, line, start):
        return None
    return if_not_reference(match)


def aws_secret(match: re.Match[str]) -> tuple[int, int] | None:
    """40 characters of base64 with no prefix of their own: taken when random (mixed case,
    digits, high entropy), standing alone, and not a line of a base64 blob or certificate."""
    value, text = match.group(), match.string
    if AWS_EXAMPLE.fullmatch(value) or not (
        is_random(value) and has_digit(value) and shannon_entropy(value) >= AWS_SECRET_MIN_ENTROPY
    ):
        return None
    if _BLOB_LINE_BEFORE.search(text, max(0, match.start() - 64), match.start()):
        return None
    if _BLOB_LINE_AFTER.match(text, match.end()):
        return None
    return match.span()


def env_entropy(match: re.Match[str]) -> tuple[int, int] | None:
    """`NAME=<random token>` alone on its line, whatever the name: a generated secret. Not a
    name that describes one (`SECRET_NAME`), a URL or a path."""
    name, value = match.group("name"), match.group("s")
    if NAME_PARTS.findall(name)[-1].lower() in words.META_PARTS or value.startswith("/"):
        return None
    if _DOTTED_NAME.fullmatch(value):  # `OID_X = SignatureAlgorithmOID.RSA_WITH_SHA256`
        return None
    return if_random(match)
