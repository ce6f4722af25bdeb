"""Made-up secrets in every format the redactor knows, and where they are placed in a text.

Everything is generated here from a seeded generator and assembled from parts, so no file in
the repository holds a whole key (and none of them is real). `Sample.secret` is what must not
survive redaction; `Sample.text` is how the format appears (a key file, a URL, a command).
"""

from __future__ import annotations

import base64
import json
import random
import string
from dataclasses import dataclass

_RNG = random.Random(21)
ALNUM = string.ascii_letters + string.digits
B64 = ALNUM + "+/"


def rand(n: int, alphabet: str = ALNUM) -> str:
    """`n` random characters, with at least one digit, one upper and one lower case letter."""
    while True:
        value = "".join(_RNG.choice(alphabet) for _ in range(n))
        if n < 3 or alphabet not in (ALNUM, B64):
            return value
        if any(c.isdigit() for c in value) and value.lower() != value != value.upper():
            return value


def b64(data: bytes, width: int = 64, sep: str = "\n") -> str:
    text = base64.b64encode(data).decode()
    return sep.join(text[i : i + width] for i in range(0, len(text), width))


def b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).decode().rstrip("=")


def random_bytes(n: int) -> bytes:
    return bytes(_RNG.randrange(256) for _ in range(n))


@dataclass(frozen=True)
class Sample:
    text: str  # the secret as it appears (a whole key file, a URL, a command)
    secret: str  # the part that must go (a key body, a password)
    label: str  # the kind in `[REDACTED:<kind>]`


def _pem(kind: str, der_head: bytes, body: int = 600) -> str:
    der = der_head + random_bytes(body)
    begin, end = "-----BEGIN", "-----END"
    return f"{begin} {kind}PRIVATE KEY-----\n{b64(der)}\n{end} {kind}PRIVATE KEY-----"


RSA_DER = bytes.fromhex("308204a4020100028201010000")
PKCS8_DER = bytes.fromhex("308204be020100300d06092a864886f70d0101010500048204a8")
# A certificate is public: a SEQUENCE opening with a nested SEQUENCE, not a version INTEGER.
CERT_DER = bytes.fromhex("308203773082025fa003020102021400") + random_bytes(860)
RSA_PEM = _pem("RSA ", RSA_DER)
PKCS8_PEM = _pem("", PKCS8_DER)
RSA_BODY = RSA_PEM.split("\n", 1)[1].rsplit("\n", 1)[0]


def _putty() -> Sample:
    public = b64(b"\x00\x00\x00\x0bssh-ed25519\x00\x00\x00\x20" + random_bytes(32))
    private = b64(b"\x00\x00\x00\x20" + random_bytes(32))
    mac = "".join(_RNG.choice("0123456789abcdef") for _ in range(64))
    text = (
        "PuTTY-User-Key-File-3: ssh-ed25519\nEncryption: none\nComment: eddsa-key-20240101\n"
        f"Public-Lines: 2\n{public}\nPrivate-Lines: 1\n{private}\nPrivate-" + f"MAC: {mac}"
    )
    return Sample(text, private, "private_key")


def _jose(parts: int) -> Sample:
    if parts == 5:
        header = b64url(b'{"alg":"RSA-OAEP-256","enc":"A256GCM"}')
        body = [b64url(random_bytes(n)) for n in (256, 12, 90, 16)]
        token = ".".join([header, *body])
        return Sample(token, token, "jwe")
    # The payload with spaces (`{ "sub"…` → `eyAi…`): it once slipped past a rule that wanted
    # `eyJ` twice, and only the middle was taken, as an AWS secret.
    header = b64url(b'{"alg":"HS256","typ":"JWT"}')
    payload = b64url(b'{ "sub": "' + rand(10).encode() + b'", "name": "build bot" }')
    token = f"{header}.{payload}.{b64url(random_bytes(32))}"
    return Sample(token, token, "jwt")


def _samples() -> dict[str, Sample]:
    sas_sig = rand(43, B64).replace("+", "%2B").replace("/", "%2F") + "%3D"
    url_pw = rand(6) + "/" + rand(7)
    redis_pw = rand(18)
    curl_pw = rand(14)
    base64_key = b64(RSA_PEM.encode(), width=76)
    der_body = RSA_BODY
    slack = (
        "xapp"
        + "-1-A0"
        + rand(9, string.ascii_uppercase + string.digits)
        + "-"
        + ("".join(_RNG.choice(string.digits) for _ in range(13)))
        + "-"
        + "".join(_RNG.choice("0123456789abcdef") for _ in range(64))
    )
    return {
        "slack_app_token": Sample(slack, slack, "slack_token"),
        "azure_sas": Sample(
            "https://acct.blob.core.windows.net/c/b.txt?sv=2022-11-02&ss=b&srt=o&sp=r"
            f"&se=2030-01-01T00:00:00Z&spr=https&sig={sas_sig}",
            sas_sig,
            "azure_sas_signature",
        ),
        "redis_url": Sample(f"redis://:{redis_pw}@cache.internal:6379/0", redis_pw, "password"),
        "url_password_with_slash": Sample(
            f"postgres://app:{url_pw}@db.internal:5432/main", url_pw, "password"
        ),
        "pem": Sample(RSA_PEM, RSA_BODY, "private_key"),
        "pkcs8_pem": Sample(PKCS8_PEM, PKCS8_PEM.split("\n", 2)[1], "private_key"),
        # A tool output cut short: the BEGIN line and part of the body, no END line.
        "pem_cut_short": Sample(
            "\n".join(RSA_PEM.split("\n")[:6]), "\n".join(RSA_PEM.split("\n")[1:6]), "private_key"
        ),
        "pem_without_begin": Sample(
            RSA_PEM.split("\n", 3)[3], RSA_BODY.split("\n", 2)[2], "private_key"
        ),
        "der_body_alone": Sample(der_body, der_body, "private_key"),
        "base64_wrapped_key": Sample(base64_key, base64_key.split("\n")[3], "private_key"),
        "curl_user": Sample(
            f"curl -sS -u deploy:{curl_pw} https://ci.internal/api", curl_pw, "password"
        ),
        "putty_key": _putty(),
        "jwt_spaced_payload": _jose(3),
        "jwe": _jose(5),
    }


def _issue_samples() -> dict[str, Sample]:
    """Formats that were kept in some placement (a generator of their own, so the samples above
    keep their values)."""
    rng = random.Random(42)
    password = "".join(rng.choice(ALNUM) for _ in range(14)) + "7a"
    body = RSA_PEM.split("\n")[3:-3]  # cut at both ends: no BEGIN, no opening, no END
    aws_pair = "AKIA" + "Q4W7E2R9T5Y1U8I3" + ":" + "Zx8Qp2LmN4vR7tY1uW3eS5dF0a9b8c7d6e5f4g3h"
    encoded_pair = base64.b64encode(aws_pair.encode()).decode()
    words = "".join(
        rng.choice(["correct", "horse", "battery", "staple", "lunar"]) for _ in range(4)
    )
    github = "ghp" + "_" + "".join(rng.choice(ALNUM) for _ in range(36))
    openai = "sk-proj" + "-" + "".join(rng.choice(ALNUM) for _ in range(30))
    return {
        "odbc_password": Sample(
            "Driver={ODBC Driver 18 for SQL Server};Server=tcp:db.internal,1433;Database=app;"
            f"Uid=sa;Pwd={password};Encrypt=yes;",
            password,
            "password",
        ),
        "pem_body_alone": Sample("\n".join(body), "\n".join(body), "private_key"),
        "base64_aws_key_pair": Sample(encoded_pair, encoded_pair, "aws_access_key"),
        "password_letters": Sample(f"password: {words}lunar", f"{words}lunar", "secret"),
        "password_quoted_words": Sample(
            'password = "hunter tango lunar mix"', "hunter tango lunar mix", "secret"
        ),
        "token_after_encoded_equals": Sample(
            f"https://app.example.com/login?next=%2Fcb%3Faccess_token%3D{github}",
            github,
            "github_token",
        ),
        "key_after_double_encoded_equals": Sample(
            f"redirect=https%253A%252F%252Fa.io%252F%253Fapi_key%253D{openai}",
            openai,
            "openai_key",
        ),
    }


SAMPLES = {**_samples(), **_issue_samples()}

# Made-up values in each provider family's shape (assembled from parts).
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
    "github_fine_grained": "github" + "_pat_" + R[:22] + "_" + R[:40],
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


def certificate_der() -> bytes:
    """A certificate as one is laid out: names and extensions (their OIDs) around a public key
    and a signature (random)."""
    rng = random.Random(7)
    noise = lambda n: bytes(rng.randrange(256) for _ in range(n))  # noqa: E731
    algorithm = bytes.fromhex("300d06092a864886f70d01010b0500")
    name = bytes.fromhex("0603550403") + b"\x0c\x0fapi.example.com"
    name += bytes.fromhex("060355040a") + b"\x0c\x0bExample Ltd"
    extensions = bytes.fromhex("0603551d11") + b"DNS:api.example.com" + bytes.fromhex("0603551d0e")
    head = bytes.fromhex("308203a23082028aa003020102021400") + noise(20) + algorithm + name
    return head + noise(270) + extensions + noise(20) + algorithm + noise(256)


# Where a secret sits: in prose, as an env value, as a JSON value (multi-line values get
# literal `\n`), and JSON inside a JSON string (a tool printing JSON: `\\n`, `\"`).
PLACEMENTS = {
    "prose": lambda s: f"the deploy used {s} yesterday",
    "env": lambda s: f"DEPLOY_CREDENTIAL={s}",
    "json": lambda s: json.dumps({"output": "ok", "config": {"value": s}}),
    "json_escaped": lambda s: json.dumps({"stdout": json.dumps({"config": {"value": s}})}),
}


def survivors(secret: str, text: str) -> int:
    """Length of the longest piece of `secret` still present in `text`."""
    low, high = 0, len(secret)
    while low < high:  # binary search: a piece of length n present ⇒ one of n − 1 present
        mid = (low + high + 1) // 2
        if any(secret[i : i + mid] in text for i in range(len(secret) - mid + 1)):
            low = mid
        else:
            high = mid - 1
    return low
