"""Redaction: each secret pattern is caught; ordinary code, paths, ids and hashes are left alone."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from app.summarizers.redact import ENTROPY_THRESHOLD_BITS, redact, shannon_entropy

PEM = (
    "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA\nQyNTUxOQAAACD\n"
    "-----END OPENSSH PRIVATE KEY-----"
)


@pytest.mark.parametrize(
    ("text", "secret", "label"),
    [
        (
            "key: sk-ant-api03-Zx9yW8vU7tS6rQ5pO4nM3",
            "sk-ant-api03-Zx9yW8vU7tS6rQ5pO4nM3",
            "anthropic_key",
        ),
        (
            "use sk-proj-AbCdEfGhIjKlMnOpQrStUvWx1234",
            "sk-proj-AbCdEfGhIjKlMnOpQrStUvWx1234",
            "openai_key",
        ),
        (
            "legacy sk-AbCdEfGhIjKlMnOpQrStUvWx12345678",
            "sk-AbCdEfGhIjKlMnOpQrStUvWx12345678",
            "openai_key",
        ),
        ("aws AKIAIOSFODNN7EXAMPLE here", "AKIAIOSFODNN7EXAMPLE", "aws_access_key"),
        (
            "ghp_abcdefghijklmnopqrstuvwxyz0123456789",
            "ghp_abcdefghijklmnopqrstuvwxyz0123456789",
            "github_token",
        ),
        (
            "pat github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyzABCDEFGH",
            "github_pat_11ABCDEFG",
            "github_token",
        ),
        ("slack xoxb-123456789012-abcdefghijkl", "xoxb-123456789012-abcdefghijkl", "slack_token"),
        (
            "maps AIzaSyA1234567890abcdefghijklmnopqrstuv",
            "AIzaSyA1234567890abcdefghijklmnopqrstuv",
            "google_api_key",
        ),
        ("curl -H 'Authorization: Bearer abc.def.ghi'", "abc.def.ghi", "token"),
        ("token is Bearer eyJhbGciOiJIUzI1NiJ9.payload", "eyJhbGciOiJIUzI1NiJ9", "token"),
        (f"key file:\n{PEM}\ndone", "b3BlbnNzaC1rZXktdjEAAAAA", "private_key"),
        ("password=hunter2 next", "hunter2", "secret"),
        ('{"api_key": "abc123", "user": "bob"}', "abc123", "secret"),
        ("db_passwd: s3cr3t!", "s3cr3t!", "secret"),
        ("export CLIENT_SECRET='q1w2e3r4'", "q1w2e3r4", "secret"),
        ("DEPLOY_SIGNING=Zx8Qp2LmN4vR7tY1uW3eS5dF", "Zx8Qp2LmN4vR7tY1uW3eS5dF", "high_entropy"),
    ],
)
def test_secret_is_replaced(text: str, secret: str, label: str) -> None:
    redacted = redact(text)
    assert secret not in redacted
    assert f"[REDACTED:{label}]" in redacted


def test_url_credentials_keep_user_and_host() -> None:
    assert redact("postgres://app:hunter2@db:5432/main") == "postgres://app:[REDACTED]@db:5432/main"


def test_pem_block_is_removed_whole() -> None:
    assert redact(f"before\n{PEM}\nafter") == "before\n[REDACTED:private_key]\nafter"


@pytest.mark.parametrize(
    "text",
    [
        "def get_token(self) -> str:\n    return self._token",
        "token = os.environ['API_TOKEN']",
        "password = settings.db_password",
        "see src/auth/tokens.py and tests/test_passwords.py",
        "request 123e4567-e89b-12d3-a456-426614174000 failed",
        "commit 3f2a9c1e8b7d6a5f4e3d2c1b0a9f8e7d6c5b4a39",
        'integrity = "sha512-Zx8Qp2LmN4vR7tY1uW3eS5dF0a9b8c7d6e5f4g3h2i1j=="',
        "sha256:9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08",
        "DATABASE_NAME=my_database_name_for_tests",
        "BUILD_HASH=3f2a9c1e8b7d6a5f4e3d2c1b0a9f8e7d6c5b4a39",
        "The password reset flow must always send an email; tokens expire after an hour.",
        "https://example.com/docs/api-keys#rotation",
    ],
)
def test_ordinary_text_is_untouched(text: str) -> None:
    assert redact(text) == text


def test_entropy_threshold_separates_random_from_words() -> None:
    assert shannon_entropy("Zx8Qp2LmN4vR7tY1uW3eS5dF") > ENTROPY_THRESHOLD_BITS
    assert shannon_entropy("my_database_name_for_tests") < ENTROPY_THRESHOLD_BITS
    assert shannon_entropy("3f2a9c1e8b7d6a5f4e3d2c1b0a9f8e7d6c5b4a39") <= ENTROPY_THRESHOLD_BITS
    assert shannon_entropy("") == 0.0


@pytest.mark.parametrize(
    "text",
    [
        "a-" * 10_000,
        "a:" * 10_000,
        "x=" * 10_000,
        "password_" * 3_000,
        "-----BEGIN PRIVATE KEY-----" * 2_000,
    ],
)
def test_pathological_input_stays_fast(text: str) -> None:
    started = time.perf_counter()
    redact(text)
    assert time.perf_counter() - started < 2.0  # was 80 s for "a-" * 10_000 before bounding


# Made-up values in each family's shape (assembled from parts so no file holds a whole one).
R = "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8s9T0u1V2w3X4y5Z6"
HEX = "0123456789abcdef" * 4
FAMILIES = {
    "stripe_key": "sk_" + "live_" + R[:24],
    "stripe_restricted": "rk_" + "live_" + R[:24],
    "gitlab_token": "glpat" + "-" + R[:20],
    "huggingface_token": "hf" + "_" + R[:34],
    "npm_token": "npm" + "_" + R[:36],
    "sendgrid_key": "SG" + "." + R[:22] + "." + R[:43],
    "twilio_key": "SK" + HEX[:32],
    "jwt": "eyJ" + "hbGciOiJIUzI1NiJ9" + "." + "eyJ" + "zdWIiOiIxMjM0NTY3ODkwIn0" + "." + R[:32],
    "aws_secret_key": "wJalrXUtnFEMI/K7MDENG/bPxRfiCY" + "4EXAMPLEKE",
    "anthropic_key": "sk-ant" + "-api03-" + R[:30],
    "openai_key": "sk-proj" + "-" + R[:30],
    "aws_access_key": "AKIA" + "Z7QW3E5R7T9Y1U3I",
    "github_token": "ghp" + "_" + R[:36],
    "slack_token": "xoxb" + "-123456789012-" + R[:24],
    "google_api_key": "AIza" + R[:35],
    "google_oauth": "GOCSPX" + "-" + R[:28],
    "pypi_token": "pypi" + "-AgE" + R[:52],
    "docker_token": "dckr" + "_pat_" + R[:27],
    "digitalocean_token": "dop" + "_v1_" + HEX,
    "databricks_token": "dapi" + HEX[:32],
    "vault_token": "hvs" + "." + R[:28],
    "shopify_token": "shpat" + "_" + HEX[:32],
    "linear_key": "lin" + "_api_" + R[:40],
    "grafana_token": "glsa" + "_" + R[:32] + "_" + HEX[:8],
    "newrelic_key": "NRAK" + "-" + R[:27].upper(),
    "age_key": "AGE-SECRET" + "-KEY-1" + ("QW3E5R7T9Y1U3I5O7P9A2S4D6F8G0H" * 2)[:58],
}
PLACEMENTS = {
    "prose": "the deploy used {} yesterday",
    "env": "DEPLOY_CREDENTIAL={}",
    "json": '{{"output": "ok", "config": {{"value": "{}"}}}}',
}


@pytest.mark.parametrize("family", list(FAMILIES))
@pytest.mark.parametrize("placement", list(PLACEMENTS))
def test_credential_families_in_every_placement(family: str, placement: str) -> None:
    secret = FAMILIES[family]
    redacted = redact(PLACEMENTS[placement].format(secret))
    assert secret not in redacted
    assert secret[-12:] not in redacted
    assert "[REDACTED:" in redacted


def test_an_unterminated_private_key_is_removed_with_its_body() -> None:
    text = "-----BEGIN RSA PRIVATE KEY-----\nMIIEpAIBAAKCAQEA7b" + R + "\n" + R[:40] + "\n"
    redacted = redact(f"cat id_rsa\n{text}(output truncated)")
    assert R[:20] not in redacted and "BEGIN RSA PRIVATE KEY" not in redacted
    assert redacted.endswith("(output truncated)")


@pytest.mark.parametrize(
    "text",
    [
        'echo "key ${ANTHROPIC_API_KEY:+set}"',
        '[ -n "${GITHUB_TOKEN:-}" ] && echo ok',
        "total_tokens: 12",
        "max_tokens=4096",
        '"@aws-sdk/credential-providers": "^3.910.0"',
        "cacheRead: cacheReadTokens > 0 ? cacheReadTokens : 0",
        "const apiKey = process.env.OPENAI_API_KEY;",
        "token = ReviewTokenStore.mint(project.id, 0)",
        'secret_key_base: "dev-only-secret-not-for-production"',
        "secret_key_base:\n    17→    value",
        "git commit 3f2a9c1e8b7d6a5f4e3d2c1b0a9f8e7d6c5b4a39",
        "src/app/summarizers/rule/extract_module_v2/",
        "id 123e4567-e89b-12d3-a456-426614174000 and sha256 " + HEX,
    ],
)
def test_code_numbers_and_expansions_are_untouched(text: str) -> None:
    assert redact(text) == text


def _strings(value: object) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for v in value.values() for s in _strings(v)]
    if isinstance(value, list):
        return [s for v in value for s in _strings(v)]
    return []


CORPUS = Path(__file__).resolve().parents[2] / ".." / "shared" / "real-transcripts"


@pytest.mark.skipif(not CORPUS.is_dir(), reason="../shared/real-transcripts not present")
def test_no_false_positive_on_the_real_transcripts() -> None:
    changed = []
    for path in sorted(CORPUS.glob("*.json")):
        for text in _strings(json.loads(path.read_text("utf-8"))["messages"]):
            if redact(text) != text:
                changed.append((path.name, text[:200]))
    assert changed == []
