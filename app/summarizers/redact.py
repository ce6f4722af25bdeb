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
# A BEGIN line whose END never came (a truncated paste, a cut tool output): the line and the
# base64 body after it, up to the size of the largest key.
_PEM_OPEN = re.compile(
    r"-----BEGIN (?:[A-Z0-9]+ ){0,4}PRIVATE KEY(?: BLOCK)?-----(?:[ \t\r\n]*[A-Za-z0-9+/=:,\-]"
    r"{1,128}){0,256}"
)
# Credential families with a recognisable shape: a fixed prefix, then the random part. The
# lengths are lower bounds, so a format that grows stays caught. Checked against the families
# of the public secret-scanner rule lists; each pattern is our own.
_PROVIDER_KEYS: list[tuple[str, re.Pattern[str]]] = [
    ("anthropic_key", re.compile(r"\bsk-ant-[A-Za-z0-9_\-]{16,}")),
    ("openai_key", re.compile(r"\bsk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_\-]{20,}")),
    ("aws_access_key", re.compile(r"\b(?:AKIA|ASIA|ABIA|ACCA)[0-9A-Z]{16}\b")),
    ("github_token", re.compile(r"\b(?:gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{40,})")),
    (
        "gitlab_token",
        re.compile(r"\bgl(?:pat|dt|ptt|rt|soat|cbt|ft|imt|agent)-[A-Za-z0-9_\-]{20,}"),
    ),
    ("slack_token", re.compile(r"\bxox[bpaersc]-[A-Za-z0-9\-]{10,}")),
    (
        "slack_webhook",
        re.compile(r"https://hooks\.slack\.com/(?:services|workflows)/[A-Za-z0-9/_\-]{20,}"),
    ),
    (
        "discord_webhook",
        re.compile(r"https://(?:\w+\.)?discord(?:app)?\.com/api/webhooks/\d+/[\w\-]{30,}"),
    ),
    ("google_api_key", re.compile(r"\bAIza[0-9A-Za-z_\-]{35}")),
    ("google_oauth", re.compile(r"\b(?:GOCSPX-[A-Za-z0-9_\-]{24,}|ya29\.[A-Za-z0-9_\-]{20,})")),
    (
        "stripe_key",
        re.compile(r"\b(?:sk|rk)_(?:live|test)_[A-Za-z0-9]{16,}|\bwhsec_[A-Za-z0-9]{24,}"),
    ),
    ("huggingface_token", re.compile(r"\bhf_[A-Za-z0-9]{30,}")),
    ("npm_token", re.compile(r"\bnpm_[A-Za-z0-9]{36,}")),
    ("pypi_token", re.compile(r"\bpypi-AgE[A-Za-z0-9_\-]{50,}")),
    ("docker_token", re.compile(r"\bdckr_pat_[A-Za-z0-9_\-]{20,}")),
    ("sendgrid_key", re.compile(r"\bSG\.[A-Za-z0-9_\-]{16,}\.[A-Za-z0-9_\-]{30,}")),
    ("twilio_key", re.compile(r"\bSK[0-9a-f]{32}\b")),
    ("mailgun_key", re.compile(r"\bkey-[0-9a-z]{32}\b")),
    ("shopify_token", re.compile(r"\bshp(?:at|ca|pa|ss)_[a-fA-F0-9]{32}\b")),
    ("digitalocean_token", re.compile(r"\bdo[opr]_v1_[a-f0-9]{64}\b")),
    ("databricks_token", re.compile(r"\bdapi[a-f0-9]{32}(?:-\d)?\b")),
    ("vault_token", re.compile(r"\bhv[sbr]\.[A-Za-z0-9_\-]{24,}")),
    ("linear_key", re.compile(r"\blin_api_[A-Za-z0-9]{40}\b")),
    ("postman_key", re.compile(r"\bPMAK-[a-f0-9]{24}-[a-f0-9]{34}\b")),
    (
        "grafana_token",
        re.compile(r"\b(?:glsa_[A-Za-z0-9]{32}_[a-f0-9]{8}|glc_[A-Za-z0-9+/]{32,}=*)"),
    ),
    ("sentry_token", re.compile(r"\bsntr[ysu]_[A-Za-z0-9+/=_]{40,}")),
    ("newrelic_key", re.compile(r"\bNR(?:AK|II|JS)-[A-Za-z0-9]{20,}")),
    ("atlassian_token", re.compile(r"\bATATT3[A-Za-z0-9_\-=]{60,}")),
    ("square_token", re.compile(r"\bsq0(?:atp|csp)-[A-Za-z0-9_\-]{22,}")),
    ("telegram_token", re.compile(r"\b\d{8,10}:AA[A-Za-z0-9_\-]{33}\b")),
    ("age_key", re.compile(r"\bAGE-SECRET-KEY-1[0-9A-Z]{58}\b")),
    ("jwt", re.compile(r"\beyJ[A-Za-z0-9_\-]{10,}\.eyJ[A-Za-z0-9_\-]{10,}\.[A-Za-z0-9_\-]{10,}")),
]
# An AWS secret access key: 40 characters of base64 with no prefix of its own. Caught when
# it is random enough (mixed case and digits, high entropy) and stands alone as a token, so
# a 40-character git SHA (hex, lower case) or a path is never taken for one.
_AWS_SECRET = re.compile(r"(?<![A-Za-z0-9/+=])[A-Za-z0-9/+]{40}(?![A-Za-z0-9/+=])")
AWS_SECRET_MIN_ENTROPY = 4.5
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
    r"[A-Za-z0-9_\-]{0,40}(?:password|passwd|pwd|passphrase|secret|token|credential|"
    r"api[_\-]?key|apikey|access[_\-]?key|private[_\-]?key|client[_\-]?secret|"
    r"(?:signing|encryption|master|account|session)[_\-]?key)[A-Za-z0-9_\-]{0,40}"
)
_SECRET_VALUE = r"(\[REDACTED:[a-z_]+\]|\"[^\"\n]*\"|'[^'\n]*'|[^\s,;}\]\n]+)"
# Not after `${`: `${API_KEY:+set}` / `${TOKEN:-}` are shell expansions, not assignments.
# The value is on the same line: a YAML key whose value is on the next one is not taken to
# own whatever comes there (line numbers of a `cat -n`, say).
_SECRET_PAIR = re.compile(
    rf"(?i)([\"']?(?<!\$\{{)\b{_SECRET_NAME}[\"']?[ \t]*[:=][ \t]*){_SECRET_VALUE}"
)
_ENV_LINE = re.compile(r"(?m)^(\s*(?:export\s+)?[A-Z][A-Z0-9_]*\s*=\s*)[\"']?([^\s\"'#]+)[\"']?")
_PLACEHOLDER = re.compile(r"\[REDACTED:[a-z_]+\]")
_NOT_REAL = re.compile(
    r"(?:dev|test|local)[_\-]only|not[_\-]for[_\-]prod|\b(?:example|dummy|fake|placeholder|"
    r"your[_\-]\w+[_\-]here)\b"
)
_NUMBER = re.compile(r"[\^~<>=v]{0,2}[-+]?\d[\d_,.]*[kKmM]?")


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
    """Values a `secret=` pair may hold that are not secrets: empty, placeholders, references,
    numbers, and words or code (no digit, not random)."""
    bare = value.strip("\"'`")
    if not bare or _PLACEHOLDER.fullmatch(bare):
        return True
    lowered = bare.lower()
    if lowered in {
        "none", "null", "nil", "true", "false", "''", "<redacted>", "***", "xxx", "changeme",
    }:  # fmt: skip
        return True
    # References, not values: ${VAR}, $VAR, os.environ[...], settings.x, function calls.
    if bare.startswith(("$", "os.", "settings.", "env.", "process.env", "<", "{")) or "(" in bare:
        return True
    # Counts, sizes and versions (`total_tokens: 12`, `"^3.910.0"`) are never secrets.
    if _NUMBER.fullmatch(bare):
        return True
    # Values that say they are not real: `dev-only-secret-not-for-production`, `dummy-key-1`.
    if _NOT_REAL.search(lowered):
        return True
    # No digit at all: a word, an identifier or an expression in code (`cacheReadTokens`,
    # `usage.input_tokens`, `'test-key'`), unless long and random (a letters-only token).
    if not any(c.isdigit() for c in bare):
        return not (len(bare) >= MIN_ENTROPY_VALUE_LENGTH and _random(bare))
    return False


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


def _random(value: str) -> bool:
    """Mixed case and high entropy: how generated keys look, and words and code do not."""
    return (
        any(c.isupper() for c in value)
        and any(c.islower() for c in value)
        and shannon_entropy(value) > ENTROPY_THRESHOLD_BITS
    )


def _aws_secret(match: re.Match[str]) -> str:
    value = match.group(0)
    random_looking = (
        _random(value)
        and any(c.isdigit() for c in value)
        and shannon_entropy(value) >= AWS_SECRET_MIN_ENTROPY
    )
    return _label("aws_secret_key") if random_looking else value


def _fixed(kind: str) -> Callable[[re.Match[str]], str]:
    return lambda _match: _label(kind)


def _rules() -> list[tuple[re.Pattern[str], Callable[[re.Match[str]], str]]]:
    rules: list[tuple[re.Pattern[str], Callable[[re.Match[str]], str]]] = [
        (_PEM, lambda m: _label("private_key")),
        (_PEM_OPEN, lambda m: _label("private_key")),
    ]
    rules += [(pattern, _fixed(kind)) for kind, pattern in _PROVIDER_KEYS]
    rules += [
        (_AUTH_HEADER, lambda m: f"{m.group(1)}{m.group(2)} {_label('token')}"),
        (_BEARER, lambda m: f"{m.group(1)}{_label('token')}"),
        (_URL_CREDENTIALS, lambda m: f"{m.group(1)}[REDACTED]{m.group(2)}"),
        (_AWS_SECRET, _aws_secret),
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
