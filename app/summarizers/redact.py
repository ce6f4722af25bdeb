"""Secret redaction: before text leaves for an external model, and before a summary is stored.

Every rule in `RULES` finds the spans of `text` that are secret (for `password=hunter2` only
the value: the name stays, it says what was there). Spans are found on the original text,
overlapping ones merge, and each merged span becomes `[REDACTED:<kind>]`, the kind of the
first rule in the table that found part of it. `redact_messages` does the same for messages
before a summarizer reads them, so no excerpt is ever cut from a text that still holds a key.

What is deliberately NOT a secret: UUIDs, git SHAs and content hashes (hex is at most 4 bits
per character), the last line of a base64 blob or certificate, references (`${VAR}`,
`os.environ[...]`), numbers and durations (`TOKEN_TTL=3600s`), names of secrets
(`secretName: tls-cert-2024`), AWS's documented example keys.

Work is linear in the input: every repetition is bounded, the long ones are possessive (no
backtracking), and the expensive rules are anchored on a literal (`://`, `-----BEGIN`, a
secret word) so most of the text is skipped by a fast scan.
"""

from __future__ import annotations

import base64
import binascii
import json
import math
import re
from collections import Counter
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from functools import partial
from itertools import pairwise
from typing import Any, NamedTuple

from app.engine.types import Message

__all__ = [
    "ENTROPY_THRESHOLD_BITS",
    "RULES",
    "Hit",
    "find_secrets",
    "redact",
    "redact_joined",
    "redact_messages",
    "shannon_entropy",
]

# Random base64/base62 secrets score ≈ 4.5–6 bits per character; English words and
# identifiers such as `my_database_name` score ≈ 3–3.8. Hex digests top out at 4.0.
ENTROPY_THRESHOLD_BITS = 4.0
MIN_ENTROPY_VALUE_LENGTH = 20
AWS_SECRET_MIN_ENTROPY = 4.5


class Hit(NamedTuple):
    start: int
    end: int
    kind: str  # "" from a finder: the kind of its rule


Finder = Callable[[str], Iterator[Hit]]
PATTERNS: list[re.Pattern[str]] = []  # every pattern of the rules (tests check their bounds)


@dataclass(frozen=True, slots=True)
class Rule:
    kind: str
    find: Finder


# ---------------------------------------------------------------------------------------------
# Shared fragments. Text reaches us raw, or JSON-escaped once or twice (a tool printing JSON,
# a transcript inside a JSON string): a line break may be `\n`, `\\n` or `\\\\n` literally.
_SP = r"[ \t]{0,64}+"  # spaces, bounded and possessive like every repetition here
_SP1 = r"[ \t]{1,64}+"
_NL = rf"(?:{_SP}(?:\r?\n|(?:\\{{1,4}}r)?\\{{1,4}}n){_SP})"
_B64_CHAR = r"(?:[A-Za-z0-9+/=]|\\{1,4}/)"  # JSON may escape `/`
_LINE_END = rf"(?={_SP}(?:[\r\n\"'\\\-]|$))"  # at the end of its line (or meeting `-----END`)
# A line of a key: 16+ characters may be followed by anything after a space (a key quoted in a
# sentence); a shorter one must end its line, so a word after a key is not taken for base64.
_B64_LINE = rf"(?:{_B64_CHAR}{{16,4096}}+(?=[\s\"'\\\-]|$)|{_B64_CHAR}{{1,15}}+{_LINE_END})"
# The header lines of PEM (encrypted keys) and PuTTY key files; nothing else is eaten.
_KEY_HEADER = (
    r"(?:Proc-Type|DEK-Info|Comment|Encryption|Public-Lines|Private-Lines|Private-MAC|"
    r"Private-Hash|Key-Derivation|Argon2-[A-Za-z]{1,12}):[ \t]?[^\r\n\\]{0,256}+"
)
# The lines after a key's first line: headers and base64 lines, or (a key pasted on one line)
# base64 chunks after spaces. Stops at the first line that is neither.
_KEY_BODY = (
    rf"(?:{_NL}{{1,3}}(?:{_KEY_HEADER}|{_B64_LINE})"
    rf"|{_SP}{_B64_CHAR}{{16,4096}}+(?=[\s\"'\\\-]|$)){{0,512}}"
)
_KEY_LABEL = r"(?:[A-Z0-9]{1,12} ){0,4}PRIVATE KEY(?: BLOCK)?"
_PEM_END = rf"-----END {_KEY_LABEL}-----"
_WORD = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_")


def _standalone(text: str, start: int) -> bool:
    """Not glued to a word before it (`\\n` and `\\t` escapes count as breaks)."""
    if start == 0 or text[start - 1] not in _WORD:
        return True
    return start >= 2 and text[start - 2] == "\\" and text[start - 1] in "nrt"


def _regex(
    pattern: str,
    accept: Callable[[re.Match[str]], tuple[int, int] | None] | None = None,
    *,
    standalone: bool = True,
) -> Finder:
    """A finder from a pattern: the span of group `s` (or the whole match), when `accept`
    (given the match) agrees. `standalone`: the match must not continue a word before it.
    Its hits carry no kind: the rule's is used."""
    compiled = re.compile(pattern)
    PATTERNS.append(compiled)
    group = "s" if "s" in compiled.groupindex else 0

    def find(text: str) -> Iterator[Hit]:
        for match in compiled.finditer(text):
            if standalone and not _standalone(text, match.start()):
                continue
            span = accept(match) if accept else match.span(group)
            if span is not None and span[0] < span[1]:
                yield Hit(span[0], span[1], "")

    return find


# ---------------------------------------------------------------------------------------------
# Values: what a `name=value` may hold that is not a secret.

_PLACEHOLDER = re.compile(r"\[REDACTED(?::[a-z_]{1,40})?\]")
_NOT_REAL = re.compile(
    r"(?:dev|test|local)[_\-]only|not[_\-]for[_\-]prod|\b(?:example|dummy|fake|placeholder|"
    r"your[_\-]\w{1,40}[_\-]here)\b"
)
# Counts, sizes, versions and durations: `12`, `^3.910.0`, `3600s`, `15m`, `512Mi`, `0.5`.
_NUMBER = re.compile(
    r"(?i)[\^~<>=v]{0,2}[-+]?\d[\d_,.]{0,30}(?:[e^][-+]?\d{1,4})?"
    r"(?:ms|s|m|h|d|w|y|k|kb|mb|gb|ki|mi|gi|b|px|%)?"
)
_PATH = re.compile(r"(?:~|\.{1,2})?/[\w.\-]{1,200}(?:/[\w.\-]{0,200}){1,40}")
# Code, not a value: `config.db_password2`, `auth[2]`, `sim_auth[0]`.
_CODE_CHAIN = re.compile(
    r"[a-z_][a-z0-9_]{2,40}(?:\.[A-Za-z_]\w{0,40}){1,10}|[A-Za-z_]\w{0,40}\[.{0,512}"
)
_URL = re.compile(r"[a-z][a-z0-9+.\-]{0,30}://")
_CONSTANT = re.compile(r"[A-Z][A-Z_]{2,80}")
_DIGIT = re.compile(r"\d")
_WORDS_NOT_SECRET = {
    "none", "null", "nil", "true", "false", "''", '""', "<redacted>", "***", "xxx", "changeme",
    "password", "secret", "token", "required", "optional", "string", "str", "pass", "passwd",
    "pw", "pwd",
}  # fmt: skip
_ALPHABET_RUNS = ("abcdef", "ABCDEF", "012345")
_REFERENCE_OPENINGS = (
    "$", "%", "<", "{", "[", "(", "@", "!", "*", "#", "os.", "settings.", "env.", "process.env",
    "config.", "self.", "this.", "secrets.", "vault:",
)  # fmt: skip
# AWS's documentation examples (`AKIAIOSFODNN7EXAMPLE`, `…/bPxRfiCYEXAMPLEKEY`): public.
_AWS_EXAMPLE = re.compile(r"(?:AKIA|ASIA)[0-9A-Z]{9}EXAMPLE|[A-Za-z0-9/+]{30}EXAMPLEKEY")


def shannon_entropy(value: str) -> float:
    """Bits per character of `value` (0 for an empty string)."""
    if not value:
        return 0.0
    counts = Counter(value)
    total = len(value)
    return -sum(n / total * math.log2(n / total) for n in counts.values())


def _random(value: str) -> bool:
    """Mixed case and high entropy: how generated keys look, and words and code do not (nor an
    alphabet written out, `abc…XYZ0123456789`)."""
    mixed_case = value.lower() != value != value.upper()
    if not mixed_case or any(run in value for run in _ALPHABET_RUNS):
        return False
    return shannon_entropy(value) > ENTROPY_THRESHOLD_BITS


def _generated_letters(value: str) -> bool:
    """A letters-only value that is random, not a long identifier: its case changes every one
    or two letters (`QkZxLmPwRtYv…`), where words (`AbstractTokenProvider`) run longer."""
    parts = _NAME_PARTS.findall(value)
    return bool(parts) and len(value) / len(parts) < 3 and _random(value)


def _has_digit(value: str) -> bool:
    return _DIGIT.search(value) is not None


def _is_reference(bare: str) -> bool:
    """Where a secret comes from, not the secret: `$TOKEN`, `${{ secrets.X }}`, `<password>`,
    `os.environ[...]`, a call, a masked `****`, a constant's name or a placeholder
    (`API_KEY`, `REDACTED_TOKEN`), an earlier redaction."""
    return (
        bare.startswith(_REFERENCE_OPENINGS)
        or "(" in bare
        or bool(_PLACEHOLDER.match(bare) or _CONSTANT.fullmatch(bare))
    )


def _is_benign_value(value: str) -> bool:
    """Values a secret-named field may hold that are not secrets."""
    bare = value.strip("\"'`\\")
    if len(bare) < 4 or _is_reference(bare) or bare.lower() in _WORDS_NOT_SECRET:
        return True
    if _NUMBER.fullmatch(bare) or _NOT_REAL.search(bare.lower()) or _AWS_EXAMPLE.fullmatch(bare):
        return True
    if _URL.match(bare):  # a URL's own credentials have their rule (`://user:pw@`)
        return True
    if _CODE_CHAIN.fullmatch(bare) or (_PATH.fullmatch(bare) and not _random(bare)):
        return True
    # No digit at all: a word, an identifier or an expression in code (`cacheReadTokens`,
    # `'test-key'`), unless long and random (a letters-only token).
    if not _has_digit(bare):
        return not (len(bare) >= MIN_ENTROPY_VALUE_LENGTH and _generated_letters(bare))
    return False


# ---------------------------------------------------------------------------------------------
# `name = value` pairs whose name says password / secret / token / key: JSON, YAML, env, code,
# CLI flags. Anchored on the secret word (a fast literal scan), then the whole name around it
# is read: its words decide, so `tokenizer`, `token_ids`, `secretName`, `PWD` are not secrets.

_NAME_ANCHORS = ("pass", "pwd", "secret", "token", "credential", "key")
_ANCHOR_CASES = tuple({v for w in _NAME_ANCHORS for v in (w, w.upper(), w.capitalize())})
_NAME_CHARS = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-"
_NAME_PARTS = re.compile(r"[A-Z]?[a-z]{1,80}|[A-Z]{1,80}(?![a-z])|\d{1,80}")
_SECRET_PARTS = {
    "password", "passwords", "passwd", "passphrase", "pass", "pwd", "secret", "secrets",
    "token", "tokens", "credential", "credentials", "apikey", "apikeys", "privatekey",
    "secretkey", "accesskey",
}  # fmt: skip
# Words run together in one part (`PGPASSWORD`, `GITHUBTOKEN`); not `pass` (`bypass`, `compass`).
_SECRET_ENDINGS = (
    "password", "passwd", "passphrase", "secret", "token", "credential", "credentials",
    "apikey", "privatekey", "secretkey", "accesskey",
)  # fmt: skip
_KEY_QUALIFIERS = {
    "api", "access", "private", "secret", "signing", "encryption", "master", "account",
    "session", "shared", "auth", "client", "storage", "license", "deploy",
}  # fmt: skip
# A name ending in one of these describes a secret (its name, length, lifetime, file…).
_META_PARTS = {
    "name", "names", "id", "ids", "ttl", "length", "len", "count", "type", "types", "file",
    "files", "path", "paths", "dir", "url", "uri", "endpoint", "host", "ref", "env", "var",
    "field", "header", "expiry", "expires", "expiration", "lifetime", "timeout", "age", "size",
    "limit", "max", "min", "version", "kind", "format", "algorithm", "algo", "mode", "policy",
    "provider", "source", "prefix", "label", "arn", "enabled", "required", "regex", "pattern",
    "hint", "title", "text", "message", "description", "help", "placeholder", "error", "prompt",
    "at", "date", "time", "days", "hours", "minutes", "seconds", "ms", "rotation", "store",
    "manager", "class", "usage", "budget", "index", "position", "offset", "estimate", "rate",
}  # fmt: skip
_SHELL_NAMES = {"pwd", "oldpwd"}  # the shell's working directories
_VALUE = (
    r"(?:(?P<q>\\{0,3}[\"'])(?P<quoted>(?:(?!(?P=q))[^\r\n]){1,512}?)(?P=q)"
    r"|\\{0,3}[\"']?(?P<bare>[^\s,;&}\]\)\"'`\\<>]{1,512}+))"
)
_ASSIGNED = re.compile(
    rf"\\{{0,3}}[\"']?[ \t]{{0,64}}+(?::=|=>|:(?!:)|=(?!=))[ \t]{{0,64}}+{_VALUE}"
)  # `name": "v"`, `name = v`, `name := v`, `name => v`, not `==`
_FLAG_VALUE = re.compile(rf"[ \t]{{1,64}}+{_VALUE}")  # `--password hunter2`


def is_secret_name(name: str) -> bool:
    """`DB_PASSWORD`, `apiKey`, `client-secret`, `AWS_SECRET_ACCESS_KEY`: yes. `tokenizer`,
    `token_ids`, `secretName`, `password_min_length`, `PWD`: no."""
    parts = [p.lower() for p in _NAME_PARTS.findall(name)]
    if not parts or parts[-1] in _META_PARTS or name.lower() in _SHELL_NAMES:
        return False
    if any(p in _SECRET_PARTS or p.endswith(_SECRET_ENDINGS) for p in parts):
        return True
    return any(p in ("key", "keys") and q in _KEY_QUALIFIERS for q, p in pairwise(parts))


def _anchor_positions(text: str) -> Iterator[int]:
    for word in _ANCHOR_CASES:
        at = text.find(word)
        while at != -1:
            yield at
            at = text.find(word, at + 1)


def _name_around(text: str, at: int) -> tuple[int, int]:
    """The identifier (letters, digits, `_`, `-`; ≤ 80 each side) that contains position `at`."""
    before, after = text[max(0, at - 80) : at], text[at : at + 80]
    begin = at - (len(before) - len(before.rstrip(_NAME_CHARS)))
    return begin, at + (len(after) - len(after.lstrip(_NAME_CHARS)))


def _pairs(text: str) -> Iterator[Hit]:
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
        flag = name.startswith("--")
        match = (_FLAG_VALUE if flag else _ASSIGNED).match(text, end)
        if match is None and flag:
            match = _ASSIGNED.match(text, end)
        if match is None:
            continue
        group = "quoted" if match.group("quoted") is not None else "bare"
        if not _is_benign_value(match.group(group)):
            yield Hit(*match.span(group), "secret")


# ---------------------------------------------------------------------------------------------
# Provider keys: a fixed prefix, then the random part. Lengths are lower bounds (a format that
# grows stays caught) with a generous upper bound (work per match stays bounded). Checked
# against the families of public secret-scanner rule lists; each pattern is our own.

PROVIDER_KEYS: list[tuple[str, str]] = [
    ("anthropic_key", r"sk-ant-[A-Za-z0-9_\-]{16,512}+"),
    ("openai_key", r"sk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_\-]{20,512}+"),
    ("github_token", r"gh[pousr]_[A-Za-z0-9]{30,255}+|github_pat_[A-Za-z0-9_]{40,255}+"),
    ("gitlab_token", r"gl(?:pat|dt|ptt|rt|soat|cbt|ft|imt|agent)-[A-Za-z0-9_\-]{20,255}+"),
    # Bot, user, app-level (`xapp-`), refresh and config tokens.
    ("slack_token", r"(?:xox[a-z](?:\.xox[a-z])?|xapp)-[A-Za-z0-9\-]{10,512}+"),
    ("slack_webhook", r"https://hooks\.slack\.com/(?:services|workflows)/[A-Za-z0-9/_\-]{20,255}"),
    (
        "discord_webhook",
        r"https://(?:\w{1,20}\.)?discord(?:app)?\.com/api/webhooks/\d{1,30}/[\w\-]{30,255}",
    ),
    ("google_api_key", r"AIza[0-9A-Za-z_\-]{35}"),
    ("google_oauth", r"GOCSPX-[A-Za-z0-9_\-]{24,255}+|ya29\.[A-Za-z0-9_\-]{20,2048}+"),
    ("stripe_key", r"(?:sk|rk)_(?:live|test)_[A-Za-z0-9]{16,255}+|whsec_[A-Za-z0-9]{24,255}+"),
    ("huggingface_token", r"hf_[A-Za-z0-9]{30,255}+"),
    ("npm_token", r"npm_[A-Za-z0-9]{36,255}+"),
    ("pypi_token", r"pypi-AgE[A-Za-z0-9_\-]{50,2048}+"),
    ("docker_token", r"dckr_pat_[A-Za-z0-9_\-]{20,255}+"),
    ("sendgrid_key", r"SG\.[A-Za-z0-9_\-]{16,255}\.[A-Za-z0-9_\-]{30,255}+"),
    ("twilio_key", r"SK[0-9a-f]{32}\b"),
    ("mailgun_key", r"key-[0-9a-z]{32}\b"),
    ("shopify_token", r"shp(?:at|ca|pa|ss)_[a-fA-F0-9]{32}\b"),
    ("digitalocean_token", r"do[opr]_v1_[a-f0-9]{64}\b"),
    ("databricks_token", r"dapi[a-f0-9]{32}(?:-\d)?\b"),
    ("vault_token", r"hv[sbr]\.[A-Za-z0-9_\-]{24,512}+"),
    ("linear_key", r"lin_api_[A-Za-z0-9]{40}\b"),
    ("postman_key", r"PMAK-[a-f0-9]{24}-[a-f0-9]{34}\b"),
    ("grafana_token", r"glsa_[A-Za-z0-9]{32}_[a-f0-9]{8}|glc_[A-Za-z0-9+/]{32,512}+={0,2}"),
    ("sentry_token", r"sntr[ysu]_[A-Za-z0-9+/=_]{40,512}+"),
    ("newrelic_key", r"NR(?:AK|II|JS)-[A-Za-z0-9]{20,255}+"),
    ("atlassian_token", r"ATATT3[A-Za-z0-9_\-=]{60,512}+"),
    ("square_token", r"sq0(?:atp|csp)-[A-Za-z0-9_\-]{22,255}+"),
    ("telegram_token", r"\d{8,10}:AA[A-Za-z0-9_\-]{33}\b"),
    ("age_key", r"AGE-SECRET-KEY-1[0-9A-Z]{58}\b"),
]


def _aws_access_key(match: re.Match[str]) -> tuple[int, int] | None:
    return None if _AWS_EXAMPLE.fullmatch(match.group()) else match.span()


# ---------------------------------------------------------------------------------------------
# Private keys: PEM blocks (with or without their END, or their BEGIN), PuTTY key files, bare
# DER bodies, and any of these base64-wrapped (a Kubernetes secret, a CI variable).

# The DER openings of private keys, as base64: a SEQUENCE, then INTEGER version 0 or 1 and the
# key (PKCS#1 RSA, PKCS#8, SEC1 EC, Ed25519); OpenSSH's `openssh-key-v1`. Certificates and
# public keys open with a nested SEQUENCE instead, so they are not taken.
_DER_KEY_OPENING = (
    r"(?:MI[IJKL][A-Za-z0-9+/]{2}[AQgw]IB(?:AAKC|ADAN)|MIG[A-Za-z0-9+/]AgE[AB]"
    r"|M[A-Za-z0-9+/]{2}CAQ(?:Aw|EE)|b3BlbnNzaC1rZXktdjE)"
)
MAX_KEY_CHARS = 16384  # an RSA-8192 PEM is ≈ 6.4 kB
_END_LINE = re.compile(_PEM_END)
_BREAK = re.compile(_NL)
_B64_ONLY = re.compile(rf"[ \t]{{0,64}}{_B64_CHAR}{{0,4096}}+[ \t]{{0,64}}")
_B64_RUN = re.compile(r"[A-Za-z0-9+/]{16}")
_B64_TAIL = re.compile(rf"(?<![A-Za-z0-9+/=]){_B64_CHAR}{{16,4096}}+[ \t]{{0,64}}\Z")


def _key_body_before_end(text: str) -> Iterator[Hit]:
    """A key body whose BEGIN line is gone (an excerpt, `tail id_rsa`): the base64 lines right
    before an END line, walked back to the first line that is not base64, plus the base64 tail
    of that line (`{"key": "MIIE…`). Each window ends where the previous END was: linear."""
    floor = 0
    for end_line in _END_LINE.finditer(text):
        window = max(floor, end_line.start() - MAX_KEY_CHARS)
        floor = end_line.end()
        breaks = list(_BREAK.finditer(text, window, end_line.start()))
        line_end, start = end_line.start(), end_line.start()
        line_start = window
        for brk in reversed(breaks):  # newest line first
            if not _B64_ONLY.fullmatch(text, brk.end(), line_end):
                line_start = brk.end()
                break
            start, line_end = brk.end(), brk.start()
        else:
            if _B64_ONLY.fullmatch(text, window, line_end):
                line_start = start = window
        tail = _B64_TAIL.search(text, line_start, line_end)
        if tail is not None:
            start = tail.start()
        if _B64_RUN.search(text, start, end_line.start()):
            yield Hit(start, end_line.end(), "")


def _with_body(match: re.Match[str]) -> tuple[int, int] | None:
    """A key file's first line alone (`the file starts with -----BEGIN RSA PRIVATE KEY-----`)
    holds nothing secret."""
    return match.span() if _B64_RUN.search(match.group()) else None


def _jose(match: re.Match[str]) -> tuple[int, int] | None:
    """A JWT (3 parts) or JWE (5 parts) whose first part decodes to a JOSE header."""
    token = match.group()
    try:
        header = json.loads(_b64decode(token.split(".", 1)[0], urlsafe=True) or b"null")
    except ValueError:
        return None
    if not isinstance(header, dict) or not {"alg", "enc", "typ"} & header.keys():
        return None
    start, end = match.span()
    while token.endswith(".") and token.count(".") not in (2, 4):
        token, end = token[:-1], end - 1  # a sentence's full stop after the token
    return start, end


def _jose_tokens(text: str) -> Iterator[Hit]:
    for hit in _JOSE(text):
        parts = text.count(".", hit.start, hit.end) + 1
        yield hit._replace(kind="jwe" if parts == 5 else "jwt")


# `e[yw]` is how base64 of `{"`, `{ ` or `{\n` begins; the lookbehind (after it, so the scan
# can jump to each `e`) keeps it from starting inside a word.
_JOSE = _regex(
    r"e[yw](?<![A-Za-z0-9_\-.]e[yw])[A-Za-z0-9_\-]{8,8192}+(?:\.[A-Za-z0-9_\-]{0,65536}+){2,4}",
    _jose,
)


def _b64decode(value: str, *, urlsafe: bool = False) -> bytes:
    if urlsafe:
        data = value + "=" * (-len(value) % 4)
    else:
        data = _B64_NOISE.sub("", value).replace("\\/", "/")
        data = data[: len(data) - len(data) % 4]
    try:
        return (base64.urlsafe_b64decode if urlsafe else base64.b64decode)(data)
    except (binascii.Error, ValueError):
        return b""


_B64_NOISE = re.compile(r"(?:\\{1,4}[nr]|\s){1,64}+")
# Runs that open like base64 of PEM (`-----`), PuTTY (`PuTTY-`) or a JSON object, on one line
# or wrapped (`base64` wraps at 76).
_WRAPPED = re.compile(
    rf"(?:LS0tLS1|UHVUVFkt|e[wy])[A-Za-z0-9+/]{{60,65536}}+={{0,2}}+"
    rf"(?:{_NL}[A-Za-z0-9+/]{{4,4096}}+={{0,2}}+{_LINE_END}){{0,4096}}+"
)
_BASE64_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/")


def _base64_wrapped(text: str) -> Iterator[Hit]:
    """Base64 of a key file or of JSON credentials: decoded, and taken whole when the decoded
    text holds a secret (labelled with the inner kind). Decoded once, never recursively."""
    for match in _WRAPPED.finditer(text):
        if match.start() and text[match.start() - 1] in _BASE64_CHARS:
            continue  # inside a longer run: not where the encoding starts
        decoded = _b64decode(match.group()).decode("utf-8", "replace")
        inner = find_secrets(decoded, nested=True)
        if inner:
            yield Hit(match.start(), match.end(), inner[0].kind)


# ---------------------------------------------------------------------------------------------
# Credentials in context: URLs, HTTP headers, curl, SAS signatures, AWS secrets, env lines.


def _url_password(match: re.Match[str]) -> tuple[int, int] | None:
    password = match.group("s")
    head, slash, _ = password.partition("/")
    if slash and head.isdigit():  # `host:8080/path/@user`: a port and a path, no password
        return None
    if _is_reference(password) or password.lower() in _WORDS_NOT_SECRET:
        return None
    return match.span("s")


def _if_not_benign(match: re.Match[str]) -> tuple[int, int] | None:
    return None if _is_benign_value(match.group("s")) else match.span("s")


def _if_not_reference(match: re.Match[str]) -> tuple[int, int] | None:
    return None if _is_reference(match.group("s")) else match.span("s")


def _if_random(match: re.Match[str]) -> tuple[int, int] | None:
    value = match.group("s")
    if _AWS_EXAMPLE.fullmatch(value) or not _has_digit(value):
        return None
    return match.span("s") if _random(value) else None


_DOTTED_NAME = re.compile(r"[A-Za-z_]\w{0,80}(?:\.[A-Za-z_]\w{0,80}){1,20}")
_BLOB_LINE_BEFORE = re.compile(rf"[A-Za-z0-9+/=]{{40}}{_NL}\Z")
_BLOB_LINE_AFTER = re.compile(rf"={{0,2}}{_NL}(?:[A-Za-z0-9+/]{{40}}|-----END )")


_CURL_BEFORE = re.compile(r"(?<![\w\-])curl[ \t](?:[^\r\n;|&\\]|\\[^n]){0,400}+\Z")


def _curl_password(match: re.Match[str]) -> tuple[int, int] | None:
    """`-u user:pw` / `--user user:pw` of a curl command on the same line (not `docker -u
    1000:1000`, not `git push -u origin main:main`)."""
    text, start = match.string, match.start()
    if start == 0 or text[start - 1] not in " \t":
        return None
    line = text.rfind("\n", max(0, start - 400), start) + 1 or max(0, start - 400)
    if not _CURL_BEFORE.search(text, line, start):
        return None
    return _if_not_reference(match)


def _aws_secret(match: re.Match[str]) -> tuple[int, int] | None:
    """40 characters of base64 with no prefix of their own: taken when random (mixed case,
    digits, high entropy), standing alone, and not a line of a base64 blob or certificate."""
    value, text = match.group(), match.string
    if _AWS_EXAMPLE.fullmatch(value) or not (
        _random(value) and _has_digit(value) and shannon_entropy(value) >= AWS_SECRET_MIN_ENTROPY
    ):
        return None
    if _BLOB_LINE_BEFORE.search(text, max(0, match.start() - 64), match.start()):
        return None
    if _BLOB_LINE_AFTER.match(text, match.end()):
        return None
    return match.span()


def _env_entropy(match: re.Match[str]) -> tuple[int, int] | None:
    """`NAME=<random token>` alone on its line, whatever the name: a generated secret. Not a
    name that describes one (`SECRET_NAME`), a URL or a path."""
    name, value = match.group("name"), match.group("s")
    if _NAME_PARTS.findall(name)[-1].lower() in _META_PARTS or value.startswith("/"):
        return None
    if _DOTTED_NAME.fullmatch(value):  # `OID_X = SignatureAlgorithmOID.RSA_WITH_SHA256`
        return None
    return _if_random(match)


RULES: list[Rule] = [
    # Private keys first: their bodies hold 40-character lines and JSON-looking base64.
    Rule(
        "private_key",
        _regex(
            rf"-----BEGIN {_KEY_LABEL}-----{_KEY_BODY}(?:{_NL}{{0,3}}{_PEM_END})?",
            _with_body,
            standalone=False,
        ),
    ),
    Rule("private_key", _key_body_before_end),
    Rule(
        "private_key",
        _regex(rf"PuTTY-User-Key-File-\d{{1,2}}:[^\r\n\\]{{0,256}}+{_KEY_BODY}", _with_body),
    ),
    Rule(
        "private_key",
        _regex(rf"(?<![A-Za-z0-9+/]){_DER_KEY_OPENING}[A-Za-z0-9+/=]{{0,4096}}+{_KEY_BODY}"),
    ),
    Rule("encoded_secret", _base64_wrapped),
    Rule("jwt", _jose_tokens),
    *(Rule(kind, _regex(pattern)) for kind, pattern in PROVIDER_KEYS),
    Rule("aws_access_key", _regex(r"(?:AKIA|ASIA|ABIA|ACCA)[0-9A-Z]{16}\b", _aws_access_key)),
    # Azure SAS: `…&sp=r&sig=<url-encoded base64 HMAC>`.
    Rule(
        "azure_sas_signature",
        _regex(
            r"(?<![A-Za-z_.\-])sig=(?P<s>(?:[A-Za-z0-9+/=]|%[0-9A-Fa-f]{2}){20,512}+)",
            _if_random,
            standalone=False,
        ),
    ),
    Rule(
        "token",
        _regex(
            rf"(?:Authorization|authorization|AUTHORIZATION)[\"']?{_SP}[:=]{_SP}[\"']?{_SP}"
            rf"(?i:bearer|basic|token){_SP1}(?P<s>[A-Za-z0-9][^\s\"',;\\]{{7,4096}}+)",
            _if_not_reference,
        ),
    ),
    Rule(
        "token",
        _regex(
            r"(?:Bearer|bearer|BEARER)[ \t]{1,64}+(?P<s>[A-Za-z0-9\-._~+/]{16,4096}+={0,2}+)",
            _if_not_benign,
        ),
    ),
    # `scheme://user:pw@host`, `redis://:pw@host`; a password may hold `/` and `:`.
    Rule(
        "password",
        _regex(
            r"://(?P<user>[^\s:/@\"'\\]{0,256}+):(?P<s>[^\s@\"'\\]{1,256}+)@",
            _url_password,
            standalone=False,
        ),
    ),
    Rule(
        "password",
        _regex(
            r"-(?:[A-Za-z]{0,8}u|-user)(?:[ \t]{1,64}+|=)"
            r"\\{0,3}[\"']?[^\s:\"'\\]{0,128}:(?P<s>[^\s\"'\\]{1,256}+)",
            _curl_password,
            standalone=False,
        ),
    ),
    Rule(
        "aws_secret_key",
        _regex(
            r"(?:(?<=\\[nrt])|(?<![^\s\"'`=:(\[{,;|>]))[A-Za-z0-9/+]{40}(?![A-Za-z0-9/+=])",
            _aws_secret,
            standalone=False,
        ),
    ),
    Rule("secret", _pairs),
    Rule(
        "high_entropy",
        _regex(
            rf"(?m)(?:^|(?<=\\n)){_SP}(?:export{_SP1})?(?P<name>[A-Z][A-Z0-9_]{{0,80}}+){_SP}="
            rf"{_SP}[\"']?(?P<s>[A-Za-z0-9+/=_\-.~]{{20,4096}}+)(?=[\"']?{_SP}(?:#|$|\\n))",
            _env_entropy,
            standalone=False,
        ),
    ),
]


def find_secrets(text: str, *, nested: bool = False) -> list[Hit]:
    """The secret spans of `text`, merged where they overlap, in order; each merged span keeps
    the kind of the earliest rule that found part of it. `nested`: text decoded from base64,
    not decoded again."""
    hits: list[tuple[int, int, int, str]] = []
    for rank, rule in enumerate(RULES):
        if nested and rule.find is _base64_wrapped:
            continue
        hits += [(start, end, rank, kind or rule.kind) for start, end, kind in rule.find(text)]
    return _merge(hits)


def _merge(hits: list[tuple[int, int, int, str]]) -> list[Hit]:
    merged: list[Hit] = []
    ranks: list[int] = []
    for start, end, rank, kind in sorted(hits):
        if merged and start < merged[-1].end:
            last = merged[-1]
            better = rank < ranks[-1]
            merged[-1] = Hit(last.start, max(last.end, end), kind if better else last.kind)
            ranks[-1] = min(rank, ranks[-1])
        else:
            merged.append(Hit(start, end, kind))
            ranks.append(rank)
    return merged


def _label(kind: str) -> str:
    return f"[REDACTED:{kind}]"


def _apply(text: str, hits: Sequence[Hit]) -> str:
    if not hits:
        return text
    parts, at = [], 0
    for start, end, kind in hits:
        parts += [text[at:start], _label(kind)]
        at = end
    parts.append(text[at:])
    return "".join(parts)


def redact(text: str) -> str:
    """Replace every secret found in `text`; ordinary code, paths, UUIDs and hashes stay."""
    return _apply(text, find_secrets(text))


def redact_joined(pieces: Sequence[str]) -> list[str]:
    """Redact texts that were one output cut in pieces (adjacent tool results of a turn): each
    piece on its own, and their concatenation, so a key split across two pieces goes from both.
    """
    if len(pieces) < 2:
        return [redact(p) for p in pieces]
    joined = "".join(pieces)
    across = find_secrets(joined)
    out, offset = [], 0
    for piece in pieces:
        end = offset + len(piece)
        # The joined text's spans, clipped to this piece (rank 1: the piece's own kinds win).
        local = [
            (max(s, offset) - offset, min(e, end) - offset, 1, k)
            for s, e, k in across
            if s < end and e > offset
        ]
        own = [(s, e, 0, k) for s, e, k in find_secrets(piece)]
        out.append(_apply(piece, _merge(own + local)))
        offset = end
    return out


# ---------------------------------------------------------------------------------------------
# Messages: every string a summarizer reads (text, tool input, tool results, OpenAI arguments),
# redacted before it reads them. Ids, names and types stay as they are; stored messages are
# never touched (these are copies).

_STRUCTURAL_KEYS = frozenset(
    {"type", "id", "tool_use_id", "call_id", "name", "signature", "source", "cache_control",
     "media_type", "data", "image_url"}
)  # fmt: skip


class _Slot(NamedTuple):
    text: str
    run: int | None  # tool-result texts of one turn share a run: redacted joined


def redact_messages(messages: Sequence[Message]) -> list[Message]:
    """Copies of `messages` with every secret replaced (a message without any is returned as is).
    Adjacent tool results of one turn are redacted as one text (`redact_joined`)."""
    slots: list[_Slot] = []
    run = 0
    previous_role: str | None = None
    for message in messages:
        if not (message.role == "tool" and previous_role == "tool"):
            run += 1  # a new turn: OpenAI's role=tool results of one turn follow each other
        previous_role = message.role
        _map_message(message, partial(_collect, slots, run))
    redacted = _redact_slots(slots)
    answers = iter(redacted)
    out = []
    for message in messages:
        out.append(_map_message(message, lambda _text, _in_result: next(answers)))
    return out


def map_texts(message: Message, fn: Callable[[str], str]) -> Message:
    """`message` with `fn` applied to every string a summarizer reads (as `redact_messages`
    walks them: ids and types untouched)."""
    return _map_message(message, lambda text, _in_result: fn(text))


def _collect(slots: list[_Slot], run: int, text: str, in_result: bool) -> str:
    slots.append(_Slot(text, run if in_result else None))
    return text


def _redact_slots(slots: Sequence[_Slot]) -> list[str]:
    out: list[str] = []
    index = 0
    while index < len(slots):
        run = slots[index].run
        end = index + 1
        while run is not None and end < len(slots) and slots[end].run == run:
            end += 1
        out += redact_joined([s.text for s in slots[index:end]])
        index = end
    return out


TextMap = Callable[[str, bool], str]


def _map_message(message: Message, fn: TextMap) -> Message:
    in_result = message.role == "tool"
    content = _map_content(message.content, fn, in_result)
    calls = None
    if message.tool_calls:
        calls = [_map_call(call, fn) for call in message.tool_calls]
    if content is message.content and (calls is None or _same(calls, message.tool_calls)):
        return message
    return replace(message, content=content, tool_calls=calls or message.tool_calls)


def _map_content(content: Any, fn: TextMap, in_result: bool) -> Any:
    if isinstance(content, str):
        return fn(content, in_result)
    if not isinstance(content, list):
        return content
    blocks = [_map_block(b, fn, in_result) if isinstance(b, dict) else b for b in content]
    return content if _same(blocks, content) else blocks


def _map_block(block: dict[str, Any], fn: TextMap, in_result: bool) -> dict[str, Any]:
    """A content block: its own fields except the structural ones (ids, types, an image's
    `source`); below them (a tool's `input`, a result's `content`) every string."""
    if block.get("type") == "tool_result":
        inner = _map_content(block.get("content", ""), fn, True)
        return block if inner is block.get("content", "") else {**block, "content": inner}
    mapped = {
        k: v if k in _STRUCTURAL_KEYS else _map_value(v, fn, in_result) for k, v in block.items()
    }
    return block if _same(list(mapped.values()), list(block.values())) else mapped


def _map_value(value: Any, fn: TextMap, in_result: bool) -> Any:
    """Every string inside `value` through `fn` (keys stay)."""
    if isinstance(value, str):
        return fn(value, in_result)
    if isinstance(value, list):
        items = [_map_value(v, fn, in_result) for v in value]
        return value if _same(items, value) else items
    if isinstance(value, dict):
        mapped = {k: _map_value(v, fn, in_result) for k, v in value.items()}
        return value if _same(list(mapped.values()), list(value.values())) else mapped
    return value


def _map_call(call: Mapping[str, Any], fn: TextMap) -> Mapping[str, Any]:
    """An OpenAI tool call: its `arguments` (a JSON string, or an object some clients send)."""
    function = call.get("function")
    if not isinstance(function, dict) or "arguments" not in function:
        return call
    arguments = _map_value(function["arguments"], fn, False)
    if arguments is function["arguments"]:
        return call
    return {**call, "function": {**function, "arguments": arguments}}


def _same(new: Sequence[Any] | None, old: Sequence[Any] | None) -> bool:
    if new is None or old is None:
        return new is old
    return len(new) == len(old) and all(a is b for a, b in zip(new, old, strict=True))
