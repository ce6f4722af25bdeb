from __future__ import annotations

import hashlib

import pytest
from hypothesis import given
from hypothesis import strategies as st

from app.core.security import (
    ApiKeyConfigError,
    KeyRing,
    bearer_token,
    is_loopback,
    parse_api_keys,
)


class TestParseApiKeys:
    def test_plain_and_hashed_entries(self) -> None:
        digest = hashlib.sha256(b"s3cret").hexdigest()
        keys = parse_api_keys(f" tenant-a:key1 , tenant-c:sha256:{digest},")
        assert [k.tenant for k in keys] == ["tenant-a", "tenant-c"]
        assert keys[0].digest == hashlib.sha256(b"key1").digest()
        assert keys[1].digest == bytes.fromhex(digest)

    def test_empty_config_is_open_mode(self) -> None:
        assert parse_api_keys("") == ()
        assert KeyRing.from_config("  ").is_open

    def test_key_may_contain_colons(self) -> None:
        ring = KeyRing.from_config("t:abc:def")
        assert ring.tenant_for("abc:def") == "t"

    @pytest.mark.parametrize(
        ("raw", "reason"),
        [
            ("no-colon-here", "expected tenant:key"),
            ("tenant:", "expected tenant:key"),
            (":key", "tenant must match"),
            ("bad tenant:key", "tenant must match"),
            ("t:sha256:abc", "64 hex"),
            ("t:sha256:" + "g" * 64, "64 hex"),
        ],
    )
    def test_malformed_entries_name_the_problem(self, raw: str, reason: str) -> None:
        with pytest.raises(ApiKeyConfigError, match=reason) as info:
            parse_api_keys("ok:fine," + raw)
        assert "entry 2" in str(info.value)

    def test_error_never_echoes_the_secret(self) -> None:
        with pytest.raises(ApiKeyConfigError) as info:
            parse_api_keys("bad tenant:super-secret-value")
        assert "super-secret-value" not in str(info.value)


class TestKeyRing:
    def test_resolves_each_key_to_its_tenant(self) -> None:
        digest = hashlib.sha256(b"beta-key").hexdigest()
        ring = KeyRing.from_config(f"alpha:alpha-key,beta:sha256:{digest}")
        assert ring.tenant_for("alpha-key") == "alpha"
        assert ring.tenant_for("beta-key") == "beta"
        assert ring.tenant_for("alpha-ke") is None
        assert ring.tenant_for("") is None

    @given(st.text(min_size=1).filter(lambda s: s != "the-key"))
    def test_no_other_token_matches(self, token: str) -> None:
        assert KeyRing.from_config("t:the-key").tenant_for(token) is None


class TestBearerToken:
    @pytest.mark.parametrize(
        ("header", "token"),
        [
            ("Bearer abc", "abc"),
            ("bearer  abc ", "abc"),
            ("Basic abc", None),
            ("Bearer", None),
            ("", None),
            (None, None),
        ],
    )
    def test_parses_the_authorization_header(self, header: str | None, token: str | None) -> None:
        assert bearer_token(header) == token


class TestLoopback:
    @pytest.mark.parametrize("host", ["127.0.0.1", "localhost", "::1", "[::1]", "127.0.0.2"])
    def test_loopback_hosts(self, host: str) -> None:
        assert is_loopback(host)

    @pytest.mark.parametrize("host", ["0.0.0.0", "10.0.0.5", "::", "example.com"])
    def test_other_hosts(self, host: str) -> None:
        assert not is_loopback(host)
