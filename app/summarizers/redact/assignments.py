"""`name = value` pairs whose name says password / secret / token / key: JSON, YAML, env, code,
CLI flags, URL-encoded query strings (`api_key%3D…`), connection strings (`;Pwd=…;`).

Anchored on the secret word (a fast literal scan), then the whole name around it is read: its
words decide, so `tokenizer`, `token_ids`, `secretName`, `PWD` are not secrets.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from itertools import pairwise

import app.summarizers.redact.words as words
from app.summarizers.redact.base import Hit, compiled
from app.summarizers.redact.values import (
    NAME_PARTS,
    PATH,
    is_benign_value,
    is_not_a_value,
    is_passphrase,
)

_ANCHOR_CASES = tuple({v for w in words.NAME_ANCHORS for v in (w, w.upper(), w.capitalize())})
_VALUE = (
    r"(?:(?P<q>\\{0,3}[\"'])(?P<quoted>(?:(?!(?P=q))[^\r\n]){1,512}?)(?P=q)"
    r"|\\{0,3}[\"']?(?P<bare>[^\s,;&}\]\)\"'`\\<>]{1,512}+))"
)
# `name": "v"`, `name = v`, `name := v`, `name => v`, not `==`
_ASSIGNED = compiled(rf"\\{{0,3}}[\"']?[ \t]{{0,64}}+(?::=|=>|:(?!:)|=(?!=))[ \t]{{0,64}}+{_VALUE}")
_FLAG_VALUE = compiled(rf"[ \t]{{1,64}}+{_VALUE}")  # `--password hunter2`
# A query string encoded once or twice (`?next=%2F%3Fapi_key%3D…`): the value ends at the next
# encoded `&`, `=` or `#`.
_ENCODED_VALUE = compiled(
    r"%(?:25)?3[Dd](?P<bare>(?:[A-Za-z0-9\-._~+/]|%(?!(?:25)?(?:26|3[Dd]|23))[0-9A-Fa-f]{2})"
    r"{1,512}+)"
)
_ENCODING = compiled(r"(?:25)?[0-9A-Fa-f]{2}")


def is_secret_name(name: str) -> bool:
    """`DB_PASSWORD`, `apiKey`, `client-secret`, `AWS_SECRET_ACCESS_KEY`: yes. `tokenizer`,
    `token_ids`, `secretName`, `password_min_length`, `PWD`: no."""
    parts = [p.lower() for p in NAME_PARTS.findall(name)]
    if not parts or parts[-1] in words.META_PARTS or name.lower() in words.SHELL_NAMES:
        return False
    if any(p in words.SECRET_PARTS or p.endswith(words.SECRET_ENDINGS) for p in parts):
        return True
    return any(p in ("key", "keys") and q in words.KEY_QUALIFIERS for q, p in pairwise(parts))


def _is_password_name(name: str) -> bool:
    return any(p.lower().endswith(words.PASSWORD_PARTS) for p in NAME_PARTS.findall(name))


def _anchor_positions(text: str) -> Iterator[int]:
    for word in _ANCHOR_CASES:
        at = text.find(word)
        while at != -1:
            yield at
            at = text.find(word, at + 1)


def _name_around(text: str, at: int) -> tuple[int, int]:
    """The identifier (letters, digits, `_`, `-`; ≤ 80 each side) that contains position `at`,
    without the digits of a URL-encoded character before it (`%3Fapi_key`)."""
    before, after = text[max(0, at - 80) : at], text[at : at + 80]
    begin = at - (len(before) - len(before.rstrip(words.NAME_CHARS)))
    if text[begin - 1 : begin] == "%":
        encoding = _ENCODING.match(text, begin, at)
        begin = encoding.end() if encoding else begin
    return begin, at + (len(after) - len(after.lstrip(words.NAME_CHARS)))


def _value(text: str, name: str, end: int) -> re.Match[str] | None:
    """The value assigned to the name that ends at `end`, if any."""
    flag = name.startswith("--")
    match = (_FLAG_VALUE if flag else _ASSIGNED).match(text, end)
    if match is None and (flag or text[end : end + 1] == "%"):
        match = (_ASSIGNED if flag else _ENCODED_VALUE).match(text, end)
    return match


def _secret_span(match: re.Match[str], name: str) -> tuple[int, int] | None:
    quoted = "quoted" in match.re.groupindex and match.group("quoted") is not None
    group = "quoted" if quoted else "bare"
    value = match.group(group)
    if not is_benign_value(value):
        return match.span(group)
    if _is_password_name(name) and is_passphrase(value, quoted=quoted):
        return match.span(group)
    return None


def find_pairs(text: str) -> Iterator[Hit]:
    names: set[int] = set()
    for at in _anchor_positions(text):
        begin, end = _name_around(text, at)
        if begin in names:
            continue
        names.add(begin)
        if text[max(0, begin - 2) : begin] == "${" or text[begin - 1 : begin] == ":":
            continue  # `${API_KEY:+set}` is an expansion; `arn:…:secret:name` an identifier
        name = text[begin:end]
        if not is_secret_name(name):
            continue
        match = _value(text, name, end)
        span = _secret_span(match, name) if match else None
        if span is not None:
            yield Hit(*span, "secret")


def connection_password(match: re.Match[str]) -> tuple[int, int] | None:
    """`;Pwd=<value>` of a connection string: any value but a reference, a word that stands for
    none, or (the shell's `PWD`) a path."""
    value = match.group("s").strip("{}")
    if is_not_a_value(value) or PATH.fullmatch(value) or value.startswith(("/", "~", ".")):
        return None
    return match.span("s")
