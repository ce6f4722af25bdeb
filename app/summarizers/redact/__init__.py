"""Secret redaction: before text leaves for an external model, and before a summary is stored.

Every rule in `RULES` finds the spans of `text` that are secret (for `password=hunter2` only
the value: the name stays, it says what was there). Spans are found on the original text,
overlapping ones merge, and each merged span becomes `[REDACTED:<kind>]`, the kind of the
first rule in the table that found part of it. `redact_messages` does the same for messages
before a summarizer reads them, so no excerpt is ever cut from a text that still holds a key;
pieces of one output (adjacent tool results, adjacent text blocks) are also redacted joined,
so a key split across two of them goes from both.

What is deliberately NOT a secret: UUIDs, git SHAs and content hashes (hex is at most 4 bits
per character), the last line of a base64 blob or certificate, a certificate's or public
key's block, base64 of text, references (`${VAR}`, `os.environ[...]`), numbers and durations
(`TOKEN_TTL=3600s`), names of secrets (`secretName: tls-cert-2024`), what a password field
says instead of a password (`password: null`, `password: <redacted>`, `the password field is
required`), AWS's documented example keys.

What is one even without its usual context: a passphrase of words after a password's name,
`Pwd=` in a connection string, a value after a URL-encoded `=` (`api_key%3D…`), a key's body
without its BEGIN line (64 columns of random base64), base64 of a key or of `AKIA…:secret`.

Work is linear in the input: every repetition is bounded, the long ones are possessive (no
backtracking), and the expensive rules are anchored on a literal (`://`, `-----BEGIN`, a
secret word) so most of the text is skipped by a fast scan.

The families, each a module: `keys` (private keys), `encoded` (JOSE tokens, base64 that
decodes to a secret), `assignments` (`name = value`, connection strings), `credentials`
(URLs, headers, curl, AWS, the entropy fallback); their patterns and words are data
(`patterns`, `words`), the table that orders them is `rules`, and `messages` walks messages.
"""

from __future__ import annotations

from app.summarizers.redact.base import PATTERNS, Hit, Rule
from app.summarizers.redact.messages import map_texts, redact_messages
from app.summarizers.redact.rules import RULES, find_secrets, redact, redact_joined
from app.summarizers.redact.values import ENTROPY_THRESHOLD_BITS, shannon_entropy

__all__ = [
    "ENTROPY_THRESHOLD_BITS",
    "PATTERNS",
    "RULES",
    "Hit",
    "Rule",
    "find_secrets",
    "map_texts",
    "redact",
    "redact_joined",
    "redact_messages",
    "shannon_entropy",
]
