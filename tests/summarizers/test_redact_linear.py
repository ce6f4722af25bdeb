"""Redaction is linear in its input, on the shapes that make regexes backtrack.

Three measures, because Python's regex engine cannot be instrumented:
- every pattern of the redactor has a bounded width (no `*`, `+` or `{n,}`), so no attempt
  scans more than a fixed number of characters from where it starts;
- Python-level work is counted (every function call while `redact` runs, `sys.setprofile`):
  deterministic, and it must about double when the input doubles;
- the regex engine's time, best of several runs, quadrupling the input: linear is ≈ 4×,
  quadratic 16× (catastrophic backtracking is far more).
"""

from __future__ import annotations

import importlib
import pkgutil
import re
import time
from functools import partial
from re import _parser

import pytest

from app.engine.types import Message
from app.summarizers import redact as redaction
from app.summarizers.redact import redact, redact_messages
from tests.summarizers.helpers import conversation
from tests.support.work import count_calls

B64_LINE = "MIIEpAIBAAKCAQEA7bq2KzL1hT9w0Yf3XpQmQx7Lr2a9Wd4Kf1Hn8Zs3Tb6Jc5Vu0Ye"
RANDOM_40 = "Zx8Qp2LmN4vR7tY1uW3eS5dF0a9b8c7d6e5f4g3h"
# Each shape is a unit repeated n times: near-secrets that start a match and then fail.
SHAPES: dict[str, str] = {
    "base64_run": "A1b2C3d4",
    "random_40_lines": RANDOM_40 + "\n",
    "equals": "=",
    "a_equals": "a=",
    "double_equals": "x==",
    "colons_equals": ":=",
    "dashes": "a-",
    "key_prefixes": "sk-ant-AKIAghp_xapp-glpat-",
    "jwt_like": "eyJhbGciOiJIUzI1NiJ9.",
    "e_y": "ey",
    "password_eq": "password=",
    "password_colon_quote": 'password: "',
    "secret_names": "api_key_token_secret_",
    "flags": "--password ",
    "pem_begins": "-----BEGIN RSA PRIVATE KEY-----\n",
    "pem_ends": "-----END RSA PRIVATE KEY-----\n",
    "pem_body_lines": B64_LINE + "\n",
    "body_then_end": (B64_LINE + "\n") * 9 + "-----END PRIVATE KEY-----\n",
    "der_openings": "MIIEpAIBAAKC ",
    "wrapped_openings": "LS0tLS1CRUdJTiBSU0EgUFJJVkFURSBLRVktLS0tLQo=\n",
    "putty_headers": "PuTTY-User-Key-File-3: x\nComment: y\n",
    "url_credentials": "://a:",
    "url_no_at": "redis://:pw/",
    "curl": "curl -u a:",
    "curl_words": "curl ",
    "sas": "&sig=Aa1%2B",
    "bearer": "Bearer ",
    "authorization": "Authorization: Bearer ",
    "escaped_breaks": "\\n",
    "double_escaped_breaks": "\\\\n",
    "env_lines": "A_B=Zx8Qp2LmN4vR7tY1uW3eS5dF\n",
    "pwd_connection": ";Pwd=",
    "pwd_braces": ";Pwd={a",
    "encoded_equals": "api_key%3D",
    "double_encoded_equals": "%253Dapi_key%253D",
    "encoded_bytes": "%3D%2F",
    "passphrase_words": "password: correcthorse ",
    "quoted_passphrase": 'password = "a b ',
    "pem_columns": (B64_LINE[:64] + "\n") * 7 + "\n",
    "pem_columns_long": B64_LINE[:64] + "\n",
    "pem_columns_escaped": (B64_LINE[:64] + "\\n") * 7 + " ",
    "aws_pair_base64": "QUtJQVo3UVczRTVSN1Q5WTFVM0k6d0phbHJYVXRuRkVNSS9LN01ERU5HL2JQeFJm ",
    "mixed": "sk-ant- password= eyJ.eyJ. ://a: -----BEGIN PRIVATE KEY----- " + RANDOM_40 + " ",
}


def _text(shape: str, chars: int) -> str:
    unit = SHAPES[shape]
    return unit * (chars // len(unit))


def test_every_pattern_has_a_bounded_width() -> None:
    patterns = list(redaction.PATTERNS)
    for module in pkgutil.iter_modules(redaction.__path__, f"{redaction.__name__}."):
        found = vars(importlib.import_module(module.name)).values()
        patterns += [v for v in found if isinstance(v, re.Pattern)]
    assert len(patterns) > 50
    unbounded = [
        p.pattern[:60] for p in patterns if _parser.parse(p.pattern, p.flags).getwidth()[1] > 2**32
    ]
    assert unbounded == []


@pytest.mark.parametrize("shape", list(SHAPES))
def test_python_work_doubles_when_the_input_doubles(shape: str) -> None:
    small, large = (count_calls(partial(redact, _text(shape, n))) for n in (20_000, 40_000))
    assert large <= 2.3 * small + 200, (small, large)


def test_message_work_doubles_when_the_messages_double() -> None:
    def messages(n: int) -> list[Message]:
        result = {"type": "tool_result", "tool_use_id": "t", "content": "sk-ant- ghp_" * 20}
        return conversation(*[("user", [result, result])] * n)

    small, large = (count_calls(partial(redact_messages, messages(n))) for n in (200, 400))
    assert large <= 2.3 * small, (small, large)


def _best_time(text: str, runs: int = 3) -> float:
    best = float("inf")
    for _ in range(runs):
        started = time.perf_counter()
        redact(text)
        best = min(best, time.perf_counter() - started)
    return best


@pytest.mark.parametrize("shape", list(SHAPES))
def test_regex_time_grows_linearly(shape: str) -> None:
    small, large = _best_time(_text(shape, 25_000)), _best_time(_text(shape, 100_000))
    # 4× the input: ≈ 4× the time when linear; 8 leaves room for a busy machine and small
    # timings, and still fails a quadratic step (16×) by a wide margin.
    assert large <= 8 * small + 0.01, (small, large)
