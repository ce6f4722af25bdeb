"""A least-recently-used map from strings, bounded by the characters of the keys it keeps
(the keys are what is large: long texts, base64 files), safe to share between threads."""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Hashable, Iterator
from typing import Generic, TypeVar

K = TypeVar("K", bound=Hashable)
V = TypeVar("V")


class TextKeyedLRU(Generic[K, V]):
    def __init__(self, max_chars: int) -> None:
        self._max_chars = max_chars
        self._chars = 0
        self._values: OrderedDict[K, tuple[V, int]] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key: K) -> V | None:
        with self._lock:
            found = self._values.get(key)
            if found is None:
                return None
            self._values.move_to_end(key)
            return found[0]

    def put(self, key: K, value: V, chars: int) -> None:
        """Remember `value` under `key`, whose size is `chars`; the oldest go past the bound."""
        with self._lock:
            if key in self._values:
                return
            self._values[key] = (value, chars)
            self._chars += chars
            while self._chars > self._max_chars:
                _, (_, evicted) = self._values.popitem(last=False)
                self._chars -= evicted

    @property
    def chars(self) -> int:
        """The characters of the keys kept."""
        return self._chars

    def __iter__(self) -> Iterator[K]:
        """The keys kept, least recently used first (a copy: safe while others write)."""
        with self._lock:
            return iter(list(self._values))

    def __len__(self) -> int:
        return len(self._values)

    def clear(self) -> None:
        with self._lock:
            self._values.clear()
            self._chars = 0
