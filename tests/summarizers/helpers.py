"""Helpers shared by the summarizer tests: settings pointing at the fake API, message builders."""

from __future__ import annotations

from typing import Any

from app.core.settings import Settings
from app.engine.types import Message
from app.summarizers.base import SummaryResult
from app.summarizers.factory import DEFAULT_MODELS
from app.summarizers.llm import LLMSummarizer
from app.summarizers.models.anthropic import AnthropicModel, anthropic_client
from app.tokens.base import TokenCounter


def llm_settings(base_url: str, **overrides: Any) -> Settings:
    values: dict[str, Any] = {
        "ANTHROPIC_API_KEY": "sk-ant-test-0000000000000000000000",
        "ANTHROPIC_BASE_URL": base_url,
        "summary_timeout_s": 1.5,
        "summary_max_retries": 0,
        "summarizer_template": None,
    }
    values.update(overrides)
    return Settings(_env_file=None, **values)


def msg(index: int, role: str, content: Any, **fields: Any) -> Message:
    """A message as a stateless route builds it (id = index, seq = index + 1)."""
    return Message(id=str(index), seq=index + 1, role=role, content=content, tokens=0, **fields)  # type: ignore[arg-type]


def conversation(*items: tuple[str, Any] | tuple[str, Any, dict[str, Any]]) -> list[Message]:
    """Messages from (role, content[, fields]) tuples, numbered in order."""
    result = []
    for index, item in enumerate(items):
        fields = item[2] if len(item) == 3 else {}
        result.append(msg(index, item[0], item[1], **fields))
    return result


def anthropic_summarizer(settings: Settings, counter: TokenCounter) -> LLMSummarizer:
    """The LLM summarizer on an Anthropic client for `settings`; its owner calls `llm.close()`."""
    name = settings.summarizer_model or DEFAULT_MODELS["anthropic"]
    model = AnthropicModel(anthropic_client(settings), name)
    return LLMSummarizer(settings=settings, counter=counter, model=model)


class InMemorySummaryCache:
    """A process-local `SummaryCache` (the service uses the database one)."""

    def __init__(self) -> None:
        self.entries: dict[str, SummaryResult] = {}

    async def get(self, key: str) -> SummaryResult | None:
        return self.entries.get(key)

    async def put(self, key: str, result: SummaryResult) -> None:
        self.entries.setdefault(key, result)
