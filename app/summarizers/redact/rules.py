"""The table of rules, in precedence order, and how their spans are merged and replaced."""

from __future__ import annotations

from collections.abc import Sequence
from functools import partial

import app.summarizers.redact.assignments as assignments
import app.summarizers.redact.credentials as credentials
import app.summarizers.redact.encoded as encoded
import app.summarizers.redact.keys as keys
import app.summarizers.redact.patterns as patterns
from app.summarizers.redact.base import Accept, Finder, Hit, Rule, regex

_P = patterns.RULE_PATTERNS


def _decoded(text: str) -> list[Hit]:
    return find_secrets(text, nested=True)


_ENCODED = partial(encoded.base64_wrapped, inner=_decoded)
# (kind, pattern name or finder, check of a match, must the match stand alone). Private keys
# first: their bodies hold 40-character lines and JSON-looking base64.
_TABLE: list[tuple[str, str | Finder, Accept | None, bool]] = [
    ("private_key", "pem", keys.with_body, False),
    ("private_key", keys.key_body_before_end, None, False),
    ("private_key", "putty", keys.with_body, True),
    ("private_key", "der", None, True),
    ("private_key", "pem_columns", keys.key_columns, False),
    ("encoded_secret", _ENCODED, None, False),
    ("jwt", encoded.jose_tokens, None, False),
    *((kind, kind, credentials.if_not_example, True) for kind, _ in patterns.PROVIDER_KEYS),
    ("azure_sas_signature", "sas", credentials.if_random, False),
    ("token", "authorization", credentials.if_not_reference, True),
    ("token", "bearer", credentials.if_not_benign, True),
    ("password", "url_password", credentials.url_password, False),
    ("password", "curl_user", credentials.curl_password, False),
    ("password", "connection_password", assignments.connection_password, False),
    ("aws_secret_key", "aws_secret", credentials.aws_secret, False),
    ("secret", assignments.find_pairs, None, False),
    ("high_entropy", "env_entropy", credentials.env_entropy, False),
]


def _finder(source: str | Finder, accept: Accept | None, alone: bool) -> Finder:
    if callable(source):
        return source
    return regex(_P[source], accept, alone=alone)


def find_secrets(text: str, *, nested: bool = False) -> list[Hit]:
    """The secret spans of `text`, merged where they overlap, in order; each merged span keeps
    the kind of the earliest rule that found part of it. `nested`: text decoded from base64,
    not decoded again."""
    hits: list[tuple[int, int, int, str]] = []
    for rank, rule in enumerate(RULES):
        if nested and rule.decodes:
            continue
        hits += [(start, end, rank, kind or rule.kind) for start, end, kind in rule.find(text)]
    return _merge(hits)


RULES: list[Rule] = [
    Rule(kind, _finder(source, accept, alone), decodes=source is _ENCODED)
    for kind, source, accept, alone in _TABLE
]


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


def _apply(text: str, hits: Sequence[Hit]) -> str:
    if not hits:
        return text
    parts, at = [], 0
    for start, end, kind in hits:
        parts += [text[at:start], f"[REDACTED:{kind}]"]
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
