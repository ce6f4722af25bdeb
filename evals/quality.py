"""`make bench-quality`: facts kept by summaries of real agent transcripts.

The corpus lives outside the project, in `<repo root>/../shared/real-transcripts/` (public,
licensed sessions of Claude Code, Codex CLI, SWE-agent, OpenHands and Aider). Each transcript
is summarized at budget = its tokens / ratio by: `rule`; `rule-4-folds` (the same in FOLDS
incremental folds, as the service does); `hybrid` with a fake LLM answering one sentence (so
its rule facts part carries the facts); `one-line`, one line per tool call (tool + target, or
command + first error-looking line) cut to the budget; `trim-last`, LangChain
`trim_messages(strategy="last")`. The ground truth (evals/real_facts.py) is mechanical and
independent of the summarizer. HELD_OUT files were not looked at while tuning.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import re
import sys
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from app.core.settings import Settings
from app.engine.types import Message
from app.services.summarize_context import default_counter, to_messages
from app.summarizers.base import SummaryRequest, SummaryResult
from app.summarizers.hybrid import HybridSummarizer
from app.summarizers.llm import LLMSummarizer
from app.summarizers.rule import rule_summary, truncate_to_tokens
from app.summarizers.rule.tools import parse_arguments
from app.tokens.base import TokenCounter
from bench.harness import render
from bench.harness import write as write_doc
from evals.next_step import QUESTIONS, asked
from evals.real_facts import CATEGORIES, LINE_CATEGORIES, ground_truth, kept

CORPUS = Path(__file__).resolve().parents[2] / "shared" / "real-transcripts"
RATIOS = (20, 100)
FOLDS = 4
METHODS = ("rule", "rule-4-folds", "hybrid", "one-line", "trim-last")
# Not used while tuning the rule summarizer: a Claude Code design session full of user
# constraints and an OpenHands run (an agent absent from the tuning files).
HELD_OUT = ("codemie-claude-196820da", "openhands-resolver-pr-viewer-1")
FAKE_NARRATIVE = "Task progress: summarized."
# What the one-line baseline names per call: the command (Codex CLI calls it `cmd`), else the
# file (SWE-agent's `create` calls it `filename`); and the first line matching /error|failed/.
_TARGET_ARGS = ("command", "cmd", "path", "file_path", "filename")
_SEED_ERROR = re.compile(r"error|failed|exception", re.IGNORECASE)


def baseline_summary(raw: list[dict[str, Any]], budget: int, counter: TokenCounter) -> str:
    calls: dict[str, tuple[str, dict[str, Any]]] = {}
    lines: list[str] = []
    for message in raw:
        for call in message.get("tool_calls") or ():
            calls[call["id"]] = (
                call["function"]["name"],
                parse_arguments(call["function"]["arguments"]),
            )
        blocks = message["content"] if isinstance(message["content"], list) else []
        for block in blocks:
            if block.get("type") == "tool_use":
                calls[block["id"]] = (block["name"], dict(block["input"]))
            elif block.get("type") == "tool_result":
                lines.append(_baseline_line(calls.get(block["tool_use_id"]), str(block["content"])))
        if message["role"] == "tool":
            lines.append(
                _baseline_line(calls.get(message["tool_call_id"]), str(message["content"]))
            )
    return truncate_to_tokens("\n".join(lines), budget, counter)


def _baseline_line(call: tuple[str, dict[str, Any]] | None, result: str) -> str:
    name, args = call or ("tool", {})
    target = next((args[k] for k in _TARGET_ARGS if isinstance(args.get(k), str) and args[k]), "")
    error = next((line for line in result.splitlines() if _SEED_ERROR.search(line)), None)
    return f"[{name}: {target}" + (f" | {error[:100]}]" if error else "]")


def rule_fold(messages: list[Message], budget: int, counter: TokenCounter) -> str:
    summary: str | None = None
    for part in fold_slices(messages):
        summary = rule_summary(part, summary, budget, counter)
    return summary or ""


def fold_slices(messages: list[Message]) -> list[list[Message]]:
    """FOLDS consecutive slices cut on turn boundaries (a tool result stays with its call)."""
    size = -(-len(messages) // FOLDS)
    cuts = [0]
    for target in range(size, len(messages), size):
        cut = max(target, cuts[-1] + 1)
        while cut < len(messages) and messages[cut].result_ids:
            cut += 1
        cuts.append(cut)
    cuts.append(len(messages))
    return [messages[a:b] for a, b in itertools.pairwise(cuts) if b > a]


Key = tuple[str, int, str, str]  # (group or family, ratio, method, category or question)
# The methods the next-step questions compare.
ASKED = ("rule", "one-line", "trim-last")
GROUPS = ("tuning", "held-out")


@dataclass
class Results:
    files: list[str]
    tokens: dict[str, int]
    counts: dict[Key, list[int]]  # kept, total
    families: dict[Key, list[int]]  # by agent family: kept, total
    answers: dict[Key, list[int]]  # next-step questions, by group and by question
    summary_tokens: dict[tuple[str, int, str], int]  # (group, ratio, method) → tokens
    input_tokens: dict[str, int]  # group → transcript tokens


class _FakeLLM(LLMSummarizer):
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


def family_of(source: dict[str, Any]) -> str:
    """The agent that wrote a transcript (`Claude Code`, `SWE-agent`, …), from its source."""
    return str(source.get("agent", "unknown")).split(" (")[0]


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
    # Imported here: the summarizer tests use this module's baseline without the bench extras.
    from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, trim_messages

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
    results = Results([], {}, _cells(), _cells(), _cells(), defaultdict(int), defaultdict(int))
    for path in files:
        document = json.loads(path.read_text("utf-8"))
        raw, family = document["messages"], family_of(document.get("source") or {})
        messages = to_messages(raw, counter)
        tokens = sum(m.tokens for m in messages)
        group = group_of(path)
        results.files.append(path.stem)
        results.tokens[path.stem] = tokens
        results.input_tokens[group] += tokens
        truth = ground_truth(raw)
        questions = asked(raw)
        for ratio in RATIOS:
            budget = tokens // ratio
            for method, summary in summaries(raw, messages, budget, counter).items():
                assert counter.count_text(summary) <= budget, (path.stem, method, ratio)
                results.summary_tokens[(group, ratio, method)] += counter.count_text(summary)
                for fact in [*truth.facts, *truth.lines]:
                    hit = kept(fact, summary)
                    _tally(results.counts[(group, ratio, method, fact.category)], hit)
                    _tally(results.families[(family, ratio, method, fact.category)], hit)
                for question, answer in questions:
                    hit = kept(answer, summary)
                    _tally(results.answers[(group, ratio, method, "all")], hit)
                    _tally(results.answers[("all", ratio, method, question.name)], hit)
        progress(f"{path.stem}: {tokens} tokens, {len(truth.facts)} facts")
    return results


def _cells() -> dict[Key, list[int]]:
    return defaultdict(lambda: [0, 0])


def _tally(cell: list[int], hit: bool) -> None:
    cell[0] += hit
    cell[1] += 1


def _share(cell: list[int] | None) -> str:
    k, t = cell or [0, 0]
    return f"{100 * k / t:.0f}% ({k}/{t})" if t else "–"


def table(results: Results, group: str) -> list[str]:
    columns = [*CATEGORIES, *LINE_CATEGORIES]
    header = "| method | ratio | actual | all facts | " + " | ".join(columns) + " |"
    rows = [header, "|" + "---|" * (len(columns) + 4)]
    for ratio in RATIOS:
        for method in METHODS:
            cells, kept_all, total_all = [], 0, 0
            for category in CATEGORIES:
                k, t = results.counts.get((group, ratio, method, category), [0, 0])
                kept_all, total_all = kept_all + k, total_all + t
                cells.append(_share([k, t]))
            cells += [
                _share(results.counts.get((group, ratio, method, c))) for c in LINE_CATEGORIES
            ]
            used = results.summary_tokens.get((group, ratio, method), 0)
            actual = f"{results.input_tokens[group] / used:.0f}×" if used else "–"
            share = f"{100 * kept_all / total_all:.0f}%" if total_all else "–"
            rows.append(f"| {method} | {ratio}× | {actual} | {share} | " + " | ".join(cells) + " |")
    return rows


def behind(results: Results) -> list[str]:
    """Where `rule` keeps fewer facts than the one-line baseline, by group and by agent family
    (computed, not written)."""
    cells = []
    families = sorted({key[0] for key in results.families})
    scopes = [("tuning", results.counts), ("held-out", results.counts)]
    for name, counts in [*scopes, *((family, results.families) for family in families)]:
        for ratio in RATIOS:
            for category in (*CATEGORIES, *LINE_CATEGORIES):
                rule = counts.get((name, ratio, "rule", category), [0, 0])
                line = counts.get((name, ratio, "one-line", category), [0, 0])
                if rule[1] and rule[0] < line[0]:
                    cells.append(f"{name} {ratio}× {category} ({rule[0]} vs {line[0]})")
    if not cells:
        return ["`rule` keeps at least as many facts as `one-line` in every cell (group, family)."]
    return ["Cells where `rule` keeps fewer facts than `one-line`: " + "; ".join(cells) + "."]


def not_ahead(results: Results, ratio: int) -> str:
    """The categories where `rule` is not ahead of `one-line` over the whole corpus (a
    category it keeps entirely counts as ahead)."""
    cells = []
    for category in (*CATEGORIES, *LINE_CATEGORIES):
        rule, line = (_pooled(results, ratio, method, category) for method in ("rule", "one-line"))
        if rule[1] and rule[0] <= line[0] and rule[0] < rule[1]:
            cells.append(f"{category} ({rule[0]} vs {line[0]} of {rule[1]})")
    if not cells:
        return f"At {ratio}× `rule` is ahead of `one-line` in every category (whole corpus)."
    return f"At {ratio}× `rule` is not ahead of `one-line` in: " + "; ".join(cells) + "."


def _pooled(results: Results, ratio: int, method: str, category: str) -> list[int]:
    cells = [results.counts.get((g, ratio, method, category), [0, 0]) for g in GROUPS]
    return [sum(c[0] for c in cells), sum(c[1] for c in cells)]


def questions_table(results: Results) -> list[str]:
    names = [q.name for q in QUESTIONS]
    header = "| method | ratio | tuning | held-out | " + " | ".join(names) + " |"
    rows = [header, "|" + "---|" * (len(names) + 4)]
    for ratio in RATIOS:
        for method in ASKED:
            groups = [_share(results.answers.get((g, ratio, method, "all"))) for g in GROUPS]
            cells = [_share(results.answers.get(("all", ratio, method, n))) for n in names]
            rows.append(f"| {method} | {ratio}× | " + " | ".join(groups + cells) + " |")
    return rows


def section(results: Results | None) -> str:
    if results is None:
        body = f"Real-transcript corpus not available (looked in `{CORPUS}`)."
        return f"## Summary retention on real transcripts\n\n{body}\n"
    tuning = [f for f in results.files if f not in HELD_OUT]
    return render(
        Path(__file__).with_name("quality.md.tmpl"),
        date=datetime.now(UTC).strftime("%Y-%m-%d"),
        files=len(results.files),
        tokens=sum(results.tokens.values()),
        tuning=", ".join(tuning),
        held_out=", ".join(f for f in results.files if f in HELD_OUT) or "none",
        folds=FOLDS,
        fake=FAKE_NARRATIVE,
        tuning_table="\n".join(table(results, "tuning")),
        held_out_table="\n".join(table(results, "held-out")),
        behind=" ".join([*behind(results), not_ahead(results, RATIOS[-1])]),
        questions="\n".join(f"{n + 1}. {q.text}" for n, q in enumerate(QUESTIONS)),
        questions_table="\n".join(questions_table(results)),
    )


if __name__ == "__main__":
    text = section(run(progress=print))
    print(text)
    write_doc(text)
    sys.exit(0)
