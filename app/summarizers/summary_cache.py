"""Content-hash cache around a summarizer: the same input is never summarized twice.

Key = sha256 over (strategy, model, prompt version, previous summary, messages as canonical
JSON, focus, max_summary_tokens; the provider when it is not `anthropic`). Message ids, seqs and
stored token counts are left out on purpose: the same conversation posted twice (or to two
sessions) is the same input. The prompt version is `Instructions.version`: PROMPT_VERSION,
with the template's sha256 when FOLDWISE_SUMMARIZER_TEMPLATE is set, so an edited template never
serves summaries written under the old one (without a template, the keys stay those written
before templates existed).
Only successful `llm` / `hybrid` results are stored; a fallback is retried next time.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from dataclasses import replace

from app.engine.types import Message
from app.summarizers.base import Summarizer, SummaryCache, SummaryRequest, SummaryResult
from app.summarizers.prompts import PROMPT_VERSION

CACHEABLE_METHODS = ("llm", "hybrid")


def canonical_messages(messages: Sequence[Message]) -> list[dict[str, object]]:
    return [
        {
            "role": m.role,
            "content": m.content,
            "name": m.name,
            "tool_calls": [dict(c) for c in m.tool_calls or ()],
            "tool_call_id": m.tool_call_id,
        }
        for m in messages
    ]


def cache_key(
    strategy: str,
    model: str | None,
    request: SummaryRequest,
    *,
    prompt: str = PROMPT_VERSION,
    provider: str = "anthropic",
) -> str:
    """The provider is in the key only when it is not `anthropic`: one model name may be served
    by two providers (an OpenAI-compatible server), and the keys written before there were
    other providers stay valid."""
    payload: dict[str, object] = {
        "strategy": strategy,
        "model": model,
        "prompt": prompt,
        "previous": request.previous_summary,
        "messages": canonical_messages(request.messages),
        "focus": request.focus,
        "max_summary_tokens": request.max_summary_tokens,
    }
    if request.task_pinned:  # only when set: the keys written before it stay valid
        payload["task_pinned"] = True
    if provider != "anthropic":
        payload["provider"] = provider
    blob = json.dumps(payload, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(blob.encode()).hexdigest()


class CachingSummarizer:
    def __init__(
        self,
        inner: Summarizer,
        cache: SummaryCache,
        *,
        strategy: str,
        model: str | None,
        prompt: str = PROMPT_VERSION,
        provider: str = "anthropic",
    ) -> None:
        """`prompt`: the version of the instructions `inner` follows (`Instructions.version`)."""
        self.inner = inner
        self.cache = cache
        self.strategy = strategy
        self.model = model
        self.prompt = prompt
        self.provider = provider

    async def summarize(self, request: SummaryRequest) -> SummaryResult:
        key = cache_key(
            self.strategy, self.model, request, prompt=self.prompt, provider=self.provider
        )
        hit = await self.cache.get(key)
        if hit is not None:
            return replace(hit, cached=True)
        result = await self.inner.summarize(request)
        if result.method in CACHEABLE_METHODS:
            await self.cache.put(key, result)
        return result
