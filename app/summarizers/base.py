"""The Summarizer seam: one Protocol, plain request/result data."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal, Protocol

from app.engine.types import Message

Method = Literal["rule", "llm", "hybrid", "fallback"]


@dataclass(frozen=True, slots=True)
class SummaryRequest:
    messages: Sequence[Message]  # only messages not yet covered by previous_summary
    previous_summary: str | None
    max_summary_tokens: int
    focus: str | None = None  # user instructions: what the summary must keep
    task_pinned: bool = False  # the first user message is sent verbatim beside the summary


@dataclass(frozen=True, slots=True)
class SummaryResult:
    text: str  # already redacted, ≤ max_summary_tokens
    tokens: int
    method: Method
    model: str | None = None
    tokens_in: int = 0  # summarizer (LLM) usage; 0 for rule
    tokens_out: int = 0
    fallback: str | None = None  # why the LLM was not used, when it was asked
    cached: bool = False


class Summarizer(Protocol):
    async def summarize(self, request: SummaryRequest) -> SummaryResult: ...


class SummaryCache(Protocol):
    """Content-hash cache shared by all processes (the database in production)."""

    async def get(self, key: str) -> SummaryResult | None: ...

    async def put(self, key: str, result: SummaryResult) -> None: ...
