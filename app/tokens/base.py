"""The TokenCounter seam: engines and summarizers receive one, tests may pass a fake."""

from __future__ import annotations

from typing import Protocol

from app.engine.types import Content


class TokenCounter(Protocol):
    def count_text(self, text: str) -> int: ...

    def count_content(self, content: Content) -> int:
        """Tokens of a message body (string or blocks), including per-block overhead."""
        ...
