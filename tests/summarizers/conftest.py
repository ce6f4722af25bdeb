"""Fixtures for the summarizer tests: a real token counter, transcripts, the fake Messages API."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from app.tokens.counter import TiktokenCounter
from app.tokens.encodings import get_encoding
from tests.support.fake_anthropic import FakeAnthropic


@pytest.fixture(scope="session")
def counter() -> TiktokenCounter:
    return TiktokenCounter(get_encoding("cl100k_base"))


@pytest.fixture
def fake_anthropic() -> Iterator[FakeAnthropic]:
    server = FakeAnthropic().start()
    yield server
    server.stop()
