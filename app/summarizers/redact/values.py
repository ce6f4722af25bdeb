"""Values: how random a value is, and what a secret-named field may hold that is not a secret
(references, numbers, paths, code, placeholders, words)."""

from __future__ import annotations

import math
from collections import Counter

import app.summarizers.redact.patterns as patterns
import app.summarizers.redact.words as words
from app.summarizers.redact.base import compiled

# Random base64/base62 secrets score ≈ 4.5–6 bits per character; English words and
# identifiers such as `my_database_name` score ≈ 3–3.8. Hex digests top out at 4.0.
ENTROPY_THRESHOLD_BITS = 4.0
MIN_ENTROPY_VALUE_LENGTH = 20

PLACEHOLDER = compiled(r"\[REDACTED(?::[a-z_]{1,40})?\]")
_NOT_REAL = compiled(
    r"(?:dev|test|local)[_\-]only|not[_\-]for[_\-]prod|\b(?:example|dummy|fake|placeholder|"
    r"your[_\-]\w{1,40}[_\-]here)\b"
)
# Counts, sizes, versions and durations: `12`, `^3.910.0`, `3600s`, `15m`, `512Mi`, `0.5`.
_NUMBER = compiled(
    r"(?i)[\^~<>=v]{0,2}[-+]?\d[\d_,.]{0,30}(?:[e^][-+]?\d{1,4})?"
    r"(?:ms|s|m|h|d|w|y|k|kb|mb|gb|ki|mi|gi|b|px|%)?"
)
PATH = compiled(r"(?:~|\.{1,2})?/[\w.\-]{1,200}(?:/[\w.\-]{0,200}){1,40}")
# Code, not a value: `config.db_password2`, `auth[2]`, `sim_auth[0]`.
_CODE_CHAIN = compiled(
    r"[a-z_][a-z0-9_]{2,40}(?:\.[A-Za-z_]\w{0,40}){1,10}|[A-Za-z_]\w{0,40}\[.{0,512}"
)
_URL = compiled(r"[a-z][a-z0-9+.\-]{0,30}://")
_CONSTANT = compiled(r"[A-Z][A-Z_]{2,80}")
_DIGIT = compiled(r"\d")
NAME_PARTS = compiled(r"[A-Z]?[a-z]{1,80}|[A-Z]{1,80}(?![a-z])|\d{1,80}")
AWS_EXAMPLE = compiled(patterns.AWS_EXAMPLE)


def shannon_entropy(value: str) -> float:
    """Bits per character of `value` (0 for an empty string)."""
    if not value:
        return 0.0
    counts = Counter(value)
    total = len(value)
    return -sum(n / total * math.log2(n / total) for n in counts.values())


def is_random(value: str) -> bool:
    """Mixed case and high entropy: how generated keys look, and words and code do not (nor an
    alphabet written out, `abc…XYZ0123456789`)."""
    mixed_case = value.lower() != value != value.upper()
    if not mixed_case or any(run in value for run in words.ALPHABET_RUNS):
        return False
    return shannon_entropy(value) > ENTROPY_THRESHOLD_BITS


def _generated_letters(value: str) -> bool:
    """A letters-only value that is random, not a long identifier: its case changes every one
    or two letters (`QkZxLmPwRtYv…`), where words (`AbstractTokenProvider`) run longer."""
    parts = NAME_PARTS.findall(value)
    return bool(parts) and len(value) / len(parts) < 3 and is_random(value)


def has_digit(value: str) -> bool:
    return _DIGIT.search(value) is not None


def is_reference(bare: str) -> bool:
    """Where a secret comes from, not the secret: `$TOKEN`, `${{ secrets.X }}`, `<password>`,
    `os.environ[...]`, a call, a masked `****`, a constant's name or a placeholder
    (`API_KEY`, `REDACTED_TOKEN`), an earlier redaction."""
    return (
        bare.startswith(words.REFERENCE_OPENINGS)
        or "(" in bare
        or bool(PLACEHOLDER.match(bare) or _CONSTANT.fullmatch(bare))
    )


def is_not_a_value(bare: str) -> bool:
    """Short, a reference, or a word that stands for no value (`null`, `changeme`)."""
    return len(bare) < 4 or is_reference(bare) or bare.lower() in words.WORDS_NOT_SECRET


def is_benign_value(value: str) -> bool:
    """Values a secret-named field may hold that are not secrets."""
    bare = value.strip("\"'`\\")
    if is_not_a_value(bare) or _NUMBER.fullmatch(bare) or _URL.match(bare):
        return True  # a URL's own credentials have their rule (`://user:pw@`)
    if _NOT_REAL.search(bare.lower()) or AWS_EXAMPLE.fullmatch(bare):
        return True
    if _CODE_CHAIN.fullmatch(bare) or (PATH.fullmatch(bare) and not is_random(bare)):
        return True
    # No digit at all: a word, an identifier or an expression in code (`cacheReadTokens`,
    # `'test-key'`), unless long and random (a letters-only token).
    if not has_digit(bare):
        return not (len(bare) >= MIN_ENTROPY_VALUE_LENGTH and _generated_letters(bare))
    return False


_PASSPHRASE_WORD = compiled(r"[a-z]{3,40}")
_PHRASE = compiled(r"[A-Za-z0-9][^\s]{0,40}(?: [^\s]{1,40}){1,5}")


def is_passphrase(value: str, *, quoted: bool) -> bool:
    """A value a person chose, after a password's name, that `is_benign_value` takes for a word:
    one lower-case word of 8+ letters (`correcthorsebatterystaple`) that is not a state
    (`hidden`, `required`, `encrypted`), or quoted words (`"hunter two words"`) that do not
    talk about the password."""
    bare = value.strip("\"'`\\")
    if is_not_a_value(bare) or _NOT_REAL.search(bare.lower()):
        return False
    lower = bare.lower()
    if any(word in lower for word in words.NAME_ANCHORS):
        return False  # a variable named for it: `newpassword`, `user_pass`
    if quoted and " " in bare:
        said = set(lower.replace(".", " ").split())
        return _PHRASE.fullmatch(bare) is not None and not said & words.WORDS_NOT_SECRET
    if not _PASSPHRASE_WORD.fullmatch(bare) or len(bare) < 8:
        return quoted and not _CODE_CHAIN.fullmatch(bare) and not bare.isidentifier()
    return lower not in words.PASSWORD_STATES and not lower.endswith(words.PASSWORD_STATE_ENDINGS)
