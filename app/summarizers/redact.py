"""Secret redaction: before text leaves for an external model, and before a summary is stored.

Patterns run in a fixed order, most specific first, so a PEM block or a provider key is
labelled as such before the generic `key=value` rule sees it. Each match is replaced by
`[REDACTED:<kind>]`.

What is deliberately NOT a secret: UUIDs, git SHAs and content hashes (lock files, checksums)
in ordinary text. Hex-only values are low entropy per character (at most 4 bits), and the
entropy rule below only looks at `NAME=value` lines whose name says key/secret/token/password.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Callable

__all__ = ["ENTROPY_THRESHOLD_BITS", "redact", "shannon_entropy"]

# Random base64/base62 secrets score ≈ 4.5–6 bits per character; English words and
# identifiers such as `my_database_name` score ≈ 3–3.8. Hex digests top out at 4.0.
ENTROPY_THRESHOLD_BITS = 4.0
MIN_ENTROPY_VALUE_LENGTH = 20

_PEM = re.compile(
    r"-----BEGIN ((?:[A-Z0-9]+ ){0,4}PRIVATE KEY(?: BLOCK)?)-----.{0,16384}?-----END \1-----",
    re.DOTALL,  # bounded: an RSA-4096 key is ≈ 3.3 kB; unbounded, 10k stray BEGINs went quadratic
)
_PROVIDER_KEYS: list[tuple[str, re.Pattern[str]]] = [
    ("anthropic_key", re.compile(r"\bsk-ant-[A-Za-z0-9_\-]{16,}")),
    ("openai_key", re.compile(r"\bsk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_\-]{20,}")),
    ("aws_access_key", re.compile(r"\b(?:AKIA|ASIA)[0-9A-Z]{16}\b")),
    ("github_token", re.compile(r"\b(?:gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{40,})")),
    ("slack_token", re.compile(r"\bxox[bpars]-[A-Za-z0-9\-]{10,}")),
    ("google_api_key", re.compile(r"\bAIza[0-9A-Za-z_\-]{35}")),
]
_AUTH_HEADER = re.compile(
    r"(?i)\b(authorization\s*[:=]\s*[\"']?\s*)(bearer|basic|token)\s+[^\s\"',;]+"
)
_BEARER = re.compile(r"(?i)\b(bearer\s+)[A-Za-z0-9\-._~+/]{16,}=*")
_URL_CREDENTIALS = re.compile(
    r"\b([a-zA-Z][a-zA-Z0-9+.\-]{0,30}://[^\s:/@\"']{1,256}:)[^\s@/\"']{1,256}(@)"
)
# `password=…`, `"api_key": "…"`, `secret: …`, `DB_PASSWORD=…` — JSON, YAML and env styles.
# Bounded repetitions ({0,40}) keep every pattern linear: an unbounded `[\w-]*` around the
# name made a 20 kB line of "a-a-a-…" take 80 s (catastrophic backtracking).
_SECRET_NAME = (
    r"[A-Za-z0-9_\-]{0,40}(?:password|passwd|pwd|secret|token|api[_\-]?key|apikey|"
    r"access[_\-]?key|private[_\-]?key|client[_\-]?secret)[A-Za-z0-9_\-]{0,40}"
)
_SECRET_VALUE = r"(\[REDACTED:[a-z_]+\]|\"[^\"\n]*\"|'[^'\n]*'|[^\s,;}\]\n]+)"
_SECRET_PAIR = re.compile(rf"(?i)([\"']?\b{_SECRET_NAME}[\"']?\s*[:=]\s*){_SECRET_VALUE}")
_ENV_LINE = re.compile(r"(?m)^(\s*(?:export\s+)?[A-Z][A-Z0-9_]*\s*=\s*)[\"']?([^\s\"'#]+)[\"']?")
_PLACEHOLDER = re.compile(r"\[REDACTED:[a-z_]+\]")


def shannon_entropy(value: str) -> float:
    """Bits per character of `value` (0 for an empty string)."""
    if not value:
        return 0.0
    counts = Counter(value)
    total = len(value)
    return -sum(n / total * math.log2(n / total) for n in counts.values())


def _label(kind: str) -> str:
    return f"[REDACTED:{kind}]"


def _is_benign_value(value: str) -> bool:
    """Values a `secret=` pair may hold that are not secrets: empty, placeholders, references."""
    bare = value.strip("\"'")
    if not bare or _PLACEHOLDER.fullmatch(bare):
        return True
    lowered = bare.lower()
    if lowered in {"none", "null", "true", "false", "''", "<redacted>", "***", "xxx", "changeme"}:
        return True
    # References, not values: ${VAR}, $VAR, os.environ[...], settings.x, function calls.
    return bare.startswith(("$", "os.", "settings.", "env.", "process.env", "<", "{")) or (
        "(" in bare
    )


def _pair(match: re.Match[str]) -> str:
    prefix, value = match.group(1), match.group(2)
    if _is_benign_value(value):
        return match.group(0)
    quote = value[0] if value[0] in "\"'" and value[-1] == value[0] and len(value) > 1 else ""
    return f"{prefix}{quote}{_label('secret')}{quote}"


def _env_entropy(match: re.Match[str]) -> str:
    prefix, value = match.group(1), match.group(2)
    if "[REDACTED" in value:
        return match.group(0)
    if len(value) >= MIN_ENTROPY_VALUE_LENGTH and shannon_entropy(value) > ENTROPY_THRESHOLD_BITS:
        return f"{prefix}{_label('high_entropy')}"
    return match.group(0)


def _fixed(kind: str) -> Callable[[re.Match[str]], str]:
    return lambda _match: _label(kind)


def _rules() -> list[tuple[re.Pattern[str], Callable[[re.Match[str]], str]]]:
    rules: list[tuple[re.Pattern[str], Callable[[re.Match[str]], str]]] = [
        (_PEM, lambda m: _label("private_key")),
    ]
    rules += [(pattern, _fixed(kind)) for kind, pattern in _PROVIDER_KEYS]
    rules += [
        (_AUTH_HEADER, lambda m: f"{m.group(1)}{m.group(2)} {_label('token')}"),
        (_BEARER, lambda m: f"{m.group(1)}{_label('token')}"),
        (_URL_CREDENTIALS, lambda m: f"{m.group(1)}[REDACTED]{m.group(2)}"),
        (_SECRET_PAIR, _pair),
        (_ENV_LINE, _env_entropy),
    ]
    return rules


_RULES = _rules()


def redact(text: str) -> str:
    """Replace every secret found in `text`; ordinary code, paths, UUIDs and hashes stay."""
    for pattern, replace in _RULES:
        text = pattern.sub(replace, text)
    return text
