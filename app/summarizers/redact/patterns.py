"""The regular expressions of redaction, as data: shared fragments, the provider-key table and
the pattern of every regex rule (named, so `rules.RULES` refers to them by name).

Every repetition is bounded and the long ones are possessive (`{n,m}+`): no backtracking, and
no match attempt reads more than a fixed number of characters.

Text reaches us raw, or JSON-escaped once or twice (a tool printing JSON, a transcript inside a
JSON string): a line break may be `\\n`, `\\\\n` or `\\\\\\\\n` literally.
"""

from __future__ import annotations

SP = r"[ \t]{0,64}+"  # spaces, bounded and possessive like every repetition here
SP1 = r"[ \t]{1,64}+"
NL = rf"(?:{SP}(?:\r?\n|(?:\\{{1,4}}r)?\\{{1,4}}n){SP})"
B64_CHAR = r"(?:[A-Za-z0-9+/=]|\\{1,4}/)"  # JSON may escape `/`
LINE_END = rf"(?={SP}(?:[\r\n\"'\\\-]|$))"  # at the end of its line (or meeting `-----END`)
# A line of a key: 16+ characters may be followed by anything after a space (a key quoted in a
# sentence); a shorter one must end its line, so a word after a key is not taken for base64.
B64_LINE = rf"(?:{B64_CHAR}{{16,4096}}+(?=[\s\"'\\\-]|$)|{B64_CHAR}{{1,15}}+{LINE_END})"
# The header lines of PEM (encrypted keys) and PuTTY key files; nothing else is eaten.
KEY_HEADER = (
    r"(?:Proc-Type|DEK-Info|Comment|Encryption|Public-Lines|Private-Lines|Private-MAC|"
    r"Private-Hash|Key-Derivation|Argon2-[A-Za-z]{1,12}):[ \t]?[^\r\n\\]{0,256}+"
)
# The lines after a key's first line: headers and base64 lines, or (a key pasted on one line)
# base64 chunks after spaces. Stops at the first line that is neither.
KEY_BODY = (
    rf"(?:{NL}{{1,3}}(?:{KEY_HEADER}|{B64_LINE})"
    rf"|{SP}{B64_CHAR}{{16,4096}}+(?=[\s\"'\\\-]|$)){{0,512}}"
)
KEY_LABEL = r"(?:[A-Z0-9]{1,12} ){0,4}PRIVATE KEY(?: BLOCK)?"
PEM_END = rf"-----END {KEY_LABEL}-----"
# The DER openings of private keys, as base64: a SEQUENCE, then INTEGER version 0 or 1 and the
# key (PKCS#1 RSA, PKCS#8, SEC1 EC, Ed25519); an encrypted PKCS#8 key (a SEQUENCE holding the
# PBES2 or PKCS#12 algorithm's OID, `BgkqhkiG9w0BBQ0w` / `BgoqhkiG9w0BDAED`); OpenSSH's
# `openssh-key-v1`. Certificates and public keys open with a nested SEQUENCE and another OID,
# so they are not taken.
DER_KEY_OPENING = (
    r"(?:MI[IJKL][A-Za-z0-9+/]{2}[AQgw]IB(?:AAKC|ADAN)|MIG[A-Za-z0-9+/]AgE[AB]"
    r"|M[A-Za-z0-9+/]{2}CAQ(?:Aw|EE)|b3BlbnNzaC1rZXktdjE"
    r"|MI[IJKL][A-Za-z0-9+/]{5}Bg(?:kqhkiG9w0BBQ0w|oqhkiG9w0BDAED))"
)
# A run of full 64-column base64 lines (how PEM wraps a key), each a line of its own, and
# the shorter last line of a key if it follows.
PEM_COLUMNS = (
    rf"(?:(?<=\\[nr])|(?<![A-Za-z0-9+/=\\]))[A-Za-z0-9+/]{{64}}"
    rf"(?:{NL}[A-Za-z0-9+/]{{64}}(?![A-Za-z0-9+/=])){{2,512}}+"
    rf"(?:{NL}[A-Za-z0-9+/]{{1,63}}+={{0,2}}+(?![A-Za-z0-9+/=]))?"
)
PEM_BEGIN_BEFORE = rf"-----BEGIN [A-Z0-9 ]{{1,64}}-----{NL}{{1,3}}\Z"
PEM_END_AFTER = rf"{NL}{{1,3}}-----END "

# Runs of base64 that open like the encoding of a secret: PEM (`-----`), PuTTY (`PuTTY-`), a
# JSON object (`{"`, `{ `, `{\n`), or an AWS access key id (`AKIA…`, `ASIA…`, `ABIA…`, `ACCA…`:
# `id:secret`, a Basic credential). On one line or wrapped (`base64` wraps at 76).
WRAPPED_OPENINGS = ("LS0tLS1", "UHVUVFkt", "ew", "ey", "QUtJQ", "QVNJQ", "QUJJQ", "QUNDQ")
WRAPPED = (
    rf"(?:{'|'.join(WRAPPED_OPENINGS)})[A-Za-z0-9+/]{{60,65536}}+={{0,2}}+"
    rf"(?:{NL}[A-Za-z0-9+/]{{4,4096}}+={{0,2}}+{LINE_END}){{0,4096}}+"
)
B64_NOISE = r"(?:\\{1,4}[nr]|\s){1,64}+"

# AWS's documentation examples (`AKIAIOSFODNN7EXAMPLE`, `…/bPxRfiCYEXAMPLEKEY`): public.
AWS_EXAMPLE = r"(?:AKIA|ASIA)[0-9A-Z]{9}EXAMPLE|[A-Za-z0-9/+]{30}EXAMPLEKEY"

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
    ("aws_access_key", r"(?:AKIA|ASIA|ABIA|ACCA)[0-9A-Z]{16}\b"),
]

# The patterns of the rules that are one regex (`rules.RULES` names them; a provider's by its
# kind).
RULE_PATTERNS: dict[str, str] = {
    **dict(PROVIDER_KEYS),
    "pem_columns": PEM_COLUMNS,
    "pem": rf"-----BEGIN {KEY_LABEL}-----{KEY_BODY}(?:{NL}{{0,3}}{PEM_END})?",
    "putty": rf"PuTTY-User-Key-File-\d{{1,2}}:[^\r\n\\]{{0,256}}+{KEY_BODY}",
    "der": rf"(?<![A-Za-z0-9+/]){DER_KEY_OPENING}[A-Za-z0-9+/=]{{0,4096}}+{KEY_BODY}",
    # `e[yw]` is how base64 of `{"`, `{ ` or `{\n` begins; the lookbehind (after it, so the
    # scan can jump to each `e`) keeps it from starting inside a word.
    "jose": (
        r"e[yw](?<![A-Za-z0-9_\-.]e[yw])[A-Za-z0-9_\-]{8,8192}+"
        r"(?:\.[A-Za-z0-9_\-]{0,65536}+){2,4}"
    ),
    # Azure SAS: `…&sp=r&sig=<url-encoded base64 HMAC>`.
    "sas": r"(?<![A-Za-z_.\-])sig=(?P<s>(?:[A-Za-z0-9+/=]|%[0-9A-Fa-f]{2}){20,512}+)",
    "authorization": (
        rf"(?:Authorization|authorization|AUTHORIZATION)[\"']?{SP}[:=]{SP}[\"']?{SP}"
        rf"(?i:bearer|basic|token){SP1}(?P<s>[A-Za-z0-9][^\s\"',;\\]{{7,4096}}+)"
    ),
    "bearer": r"(?:Bearer|bearer|BEARER)[ \t]{1,64}+(?P<s>[A-Za-z0-9\-._~+/]{16,4096}+={0,2}+)",
    # `scheme://user:pw@host`, `redis://:pw@host`; a password may hold `/` and `:`.
    "url_password": r"://(?P<user>[^\s:/@\"'\\]{0,256}+):(?P<s>[^\s@\"'\\]{1,256}+)@",
    "curl_user": (
        r"-(?:[A-Za-z]{0,8}u|-user)(?:[ \t]{1,64}+|=)"
        r"\\{0,3}[\"']?[^\s:\"'\\]{0,128}:(?P<s>[^\s\"'\\]{1,256}+)"
    ),
    # ODBC / ADO.NET connection strings: `…;Uid=sa;Pwd=<value>;`, `Pwd={a;b}` (braces quote).
    "connection_password": (
        r"(?:(?<=;)|(?<=;[ \t]))(?i:pwd|password)[ \t]{0,8}=[ \t]{0,8}"
        r"(?P<s>\{[^}\r\n]{1,256}+\}|[^;\s\"'\\{][^;\r\n\"'\\]{0,255}+)"
    ),
    "aws_secret": (r"(?:(?<=\\[nrt])|(?<![^\s\"'`=:(\[{,;|>]))[A-Za-z0-9/+]{40}(?![A-Za-z0-9/+=])"),
    "env_entropy": (
        rf"(?m)(?:^|(?<=\\n)){SP}(?:export{SP1})?(?P<name>[A-Z][A-Z0-9_]{{0,80}}+){SP}="
        rf"{SP}[\"']?(?P<s>[A-Za-z0-9+/=_\-.~]{{20,4096}}+)(?=[\"']?{SP}(?:#|$|\\n))"
    ),
}
