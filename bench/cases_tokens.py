"""Case 3: the counting part of appending a 1,000-message batch vs raw tiktoken `encode`.

The append path (`MessageService._new_row`) calls `counter.count_message(message)` once
per normalized message. Appended messages are new, so the counter's cache of long-text
counts is cleared (untimed) before every round: this measures cold counting. The baseline
encodes exactly the same strings with tiktoken directly: they are recorded by running a
second counter whose encode function appends its argument to a list, so both sides see
identical text (block bodies, JSON of tool inputs, roles).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from app.engine.shapes import NormalizedMessage, normalize_message
from app.tokens.counter import TiktokenCounter
from app.tokens.encodings import get_encoding
from bench.conversation import transcript
from bench.seed import bench_counter
from bench.timing import interleaved_medians, ratio

BATCH = 1000
ROUNDS = 25


@dataclass(frozen=True, slots=True)
class CountingResult:
    messages: int
    texts: int
    tokens: int
    app_seconds: float
    encode_seconds: float
    encode_ordinary_seconds: float

    @property
    def ratio(self) -> float:
        return ratio(self.app_seconds, self.encode_seconds)


def count_batch(counter: TiktokenCounter, batch: list[NormalizedMessage]) -> int:
    """What the append path does per message (MessageService._new_row)."""
    return sum(counter.count_message(message) for message in batch)


def encoded_texts(counter: TiktokenCounter, batch: list[NormalizedMessage]) -> list[str]:
    """Every string the counter hands to tiktoken for `batch`, in order."""
    recorded: list[str] = []
    spy = TiktokenCounter(get_encoding(counter.encoding_name))  # empty cache: every miss

    def record(text: str) -> list[int]:
        recorded.append(text)
        return []

    spy._encode = record  # a spy, for this measurement only
    count_batch(spy, batch)
    return recorded


def run_counting(shape: str = "anthropic") -> CountingResult:
    counter = bench_counter()
    raw: list[dict[str, Any]] = transcript(BATCH, shape=shape, seed=23)
    batch = [normalize_message(item, index) for index, item in enumerate(raw)]
    texts = encoded_texts(counter, batch)
    encoding = get_encoding(counter.encoding_name)

    def raw_encode() -> None:
        for text in texts:
            encoding.encode(text)

    def raw_encode_ordinary() -> None:
        for text in texts:
            encoding.encode_ordinary(text)

    tokens = count_batch(counter, batch)
    medians = interleaved_medians(
        {
            "app": lambda: count_batch(counter, batch),
            "encode": raw_encode,
            "encode_ordinary": raw_encode_ordinary,
        },
        rounds=ROUNDS,
        setup={"app": counter.clear_cache},
    )
    counter.clear_cache()
    return CountingResult(
        messages=len(batch),
        texts=len(texts),
        tokens=tokens,
        app_seconds=medians["app"],
        encode_seconds=medians["encode"],
        encode_ordinary_seconds=medians["encode_ordinary"],
    )
