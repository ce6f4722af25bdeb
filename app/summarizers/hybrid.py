"""`hybrid`: exact facts from the rule extractor (files, commands, errors) + an LLM narrative.

Format: the rule sections, then a `Narrative:` line and the model's text. On the next fold the
previous summary is split there: the facts part merges with the rule extractor, the narrative
part is the LLM's previous summary. Facts take at most FACTS_SHARE of the budget; the narrative
gets the rest. If the LLM fails, the whole fold falls back to `rule`, like `llm`.
"""

from __future__ import annotations

import asyncio
import dataclasses

from app.summarizers.base import SummaryRequest, SummaryResult
from app.summarizers.llm import LLMSummarizer, rule_fallback
from app.summarizers.rule import rule_summary, truncate_to_tokens
from app.summarizers.rule.facts import Kind
from app.tokens.base import TokenCounter

FACT_KINDS: tuple[Kind, ...] = ("task", "file", "command", "error")
NARRATIVE_HEADER = "Narrative:"
# Facts are terse (a path or an error line per item); 40% of the budget holds dozens of them
# and leaves the model room for decisions, progress and context.
FACTS_SHARE = 0.4


def split_hybrid(summary: str | None) -> tuple[str | None, str | None]:
    """(facts part, narrative part) of a hybrid summary.

    Any other summary (rule, llm) feeds both: the extractor keeps its facts and the model reads
    all of it, so switching strategy loses nothing.
    """
    if not summary:
        return None, None
    lines = summary.splitlines()
    if NARRATIVE_HEADER not in lines:
        return summary, summary
    at = lines.index(NARRATIVE_HEADER)
    facts = "\n".join(lines[:at]).strip() or None
    narrative = "\n".join(lines[at + 1 :]).strip() or None
    return facts, narrative


class HybridSummarizer:
    def __init__(self, llm: LLMSummarizer, counter: TokenCounter) -> None:
        self.llm = llm
        self.counter = counter

    async def summarize(self, request: SummaryRequest) -> SummaryResult:
        previous_facts, previous_narrative = split_hybrid(request.previous_summary)
        facts_budget = int(request.max_summary_tokens * FACTS_SHARE)
        # The rule half is pure CPU over the whole transcript: off the event loop.
        facts = await asyncio.to_thread(
            rule_summary,
            request.messages,
            previous_facts,
            facts_budget,
            self.counter,
            kinds=FACT_KINDS,
        )
        header_tokens = self.counter.count_text(f"\n{NARRATIVE_HEADER}\n")
        narrative_budget = max(
            request.max_summary_tokens - self.counter.count_text(facts) - header_tokens, 1
        )
        narrative_request = SummaryRequest(
            messages=request.messages,
            previous_summary=previous_narrative,
            max_summary_tokens=narrative_budget,
            focus=request.focus,
            prefix=request.prefix,
            prefix_note=request.prefix_note,
        )
        narrative = await self.llm.summarize(narrative_request)
        if narrative.method == "fallback":
            reason = narrative.fallback or "llm unavailable"
            return await asyncio.to_thread(
                rule_fallback, request, self.counter, reason, narrative.model, narrative.usage
            )
        body = f"{facts}\n{NARRATIVE_HEADER}\n{narrative.text}" if facts else narrative.text
        text = truncate_to_tokens(body, request.max_summary_tokens, self.counter)
        return dataclasses.replace(
            narrative, text=text, tokens=self.counter.count_text(text), method="hybrid"
        )
