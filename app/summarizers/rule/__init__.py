"""`rule`: the offline, deterministic summarizer (structured extraction, merge, evict, render)."""

from __future__ import annotations

import asyncio
from collections.abc import Collection, Sequence

from app.engine.types import Message
from app.summarizers.base import SummaryRequest, SummaryResult
from app.summarizers.redact import map_texts, redact, redact_messages
from app.summarizers.rule.extract import extract
from app.summarizers.rule.facts import Item, Kind
from app.summarizers.rule.parse import parse_summary
from app.summarizers.rule.render import fit, truncate_to_tokens
from app.summarizers.rule.scan import readable
from app.tokens.base import TokenCounter

__all__ = ["PINNED_TASK", "RuleSummarizer", "rule_summary", "said_lines", "truncate_to_tokens"]

PINNED_TASK = "see the first message (sent in full above)"


def rule_summary(
    messages: Sequence[Message],
    previous: str | None,
    budget: int,
    counter: TokenCounter,
    kinds: Collection[Kind] | None = None,
    task_pinned: bool = False,
) -> str:
    """Previous summary + messages → one merged summary of at most `budget` tokens (redacted).

    `kinds` keeps only those fact kinds (the hybrid summarizer keeps files, commands, errors).
    `task_pinned`: the first user message (the task) is sent beside the summary, so the Task
    line refers to it rather than promote a later message.
    """
    facts = parse_summary(redact(said_lines(previous)) if previous else None)
    if task_pinned and facts.get("task") is None:
        facts.add(Item("task", PINNED_TASK, -1))
    # Secrets go before any excerpt is cut (a 400-character task, an error line): a cut
    # through a key leaves a piece that no pattern recognises any more.
    extract(redact_messages([map_texts(m, readable) for m in messages]), facts)
    # The working directory is how the kept file paths read: it goes wherever files go.
    items = [i for i in facts.items() if kinds is None or i.kind in kinds or i.kind == "workdir"]
    text = fit(items, budget, counter)
    redacted = redact(text)
    # Redaction placeholders may be longer than what they replace: re-fit if so.
    return (
        redacted
        if counter.count_text(redacted) <= budget
        else truncate_to_tokens(redacted, budget, counter)
    )


def said_lines(summary: str) -> str:
    """`summary` without its blank lines: a summary's reader skips them, and redaction rescans
    a run of them from each of its line breaks (40,000 of them took 40 s)."""
    return "\n".join(line for line in summary.splitlines() if line.strip())


class RuleSummarizer:
    """Deterministic: the same request always gives the same text."""

    def __init__(self, counter: TokenCounter) -> None:
        self.counter = counter

    async def summarize(self, request: SummaryRequest) -> SummaryResult:
        # Pure CPU over up to a whole request body: a worker thread keeps the event loop free.
        text = await asyncio.to_thread(
            rule_summary,
            request.messages,
            request.previous_summary,
            request.max_summary_tokens,
            self.counter,
            task_pinned=request.task_pinned,
        )
        return SummaryResult(text=text, tokens=self.counter.count_text(text), method="rule")
