"""Prompt-cache bench: a long agent session driven turn by turn, Foldwise vs LangChain.

`python -m bench.cache` (also part of `make bench`). A session from tests/transcripts.py is
appended message by message to a Foldwise session (in process, SQLite, httpx's ASGI
transport); before each generation the client GETs the context at the budget, `anthropic`
format. LangChain's `trim_messages` (strategy "last", start on a human message, system kept)
trims the same history to the same budget. Over the turns after the first fold or trim: the
share of turns whose request starts with the whole previous one, the share of input tokens
the provider could read from its cache, the folds, and the cache-weighted input cost
(uncached tokens written at 1.25×, cached read at 0.1×) as a ratio to LangChain's. Requests
are compared without `cache_control` markers and with string contents as one text block.
"""

from __future__ import annotations

import asyncio
import json
import tempfile
from collections.abc import Callable, Sequence
from typing import Any

import httpx
from langchain_core.messages import SystemMessage, trim_messages

from app.core.db import upgrade_database
from app.core.settings import Settings
from app.engine.prompt_cache import unmarked
from app.main import create_app
from app.tokens.counter import counter_for
from app.tokens.registry import load_registry
from bench import doc
from bench.inprocess import langchain_counter, to_langchain
from tests.transcripts import agent_session

MODEL = "claude-sonnet-4-5"
# The budget, where the session is ~18× the budget, and a roomier one (~7×): a fold
# can only free what the budget holds, so the share of breaks falls as the budget grows.
BUDGETS = (12_000, 32_000)
MESSAGES, STEPS, SEED = 520, 11, 8  # STEPS: tool steps per user turn
SYSTEM_PROMPT = (
    "You are a careful coding agent working in a Python repository. Read before you edit, "
    "run the tests after every change, and explain each step in one sentence. "
) * 4
CACHE_WRITE, CACHE_READ = 1.25, 0.10
Request = list[str]  # the system text, then each message as canonical JSON


def as_request(system: Any, messages: Sequence[dict[str, Any]]) -> Request:
    """String content is the API's shorthand for one text block: the same input to its cache."""
    if isinstance(system, list):
        system = "".join(str(block.get("text", "")) for block in system)
    body = []
    for message in map(unmarked, messages):
        if isinstance(content := message.get("content"), str):
            message = {**message, "content": [{"type": "text", "text": content}]}
        body.append(json.dumps(message, sort_keys=True))
    return [system or "", *body]


class Meter:
    """The per-turn cache numbers of one side, over the turns after its first cut."""

    def __init__(self, name: str, count: Callable[[str], int]) -> None:
        self.name, self.tokens = name, count
        self.previous: Request | None = None
        self.turns = self.kept = self.cached = self.total = self.folds = 0
        self.cost = 0.0
        self.reasons: dict[str, int] = {}

    def observe(self, request: Request, measured: bool, reason: str | None = None) -> None:
        previous, self.previous = self.previous, request
        if not measured or previous is None:
            return
        shared = 0
        while shared < min(len(previous), len(request)) and previous[shared] == request[shared]:
            shared += 1
        cached = sum(map(self.tokens, request[:shared]))
        total = sum(map(self.tokens, request))
        self.turns += 1
        self.kept += shared == len(previous)
        self.cached += cached
        self.total += total
        self.cost += CACHE_READ * cached + CACHE_WRITE * (total - cached)
        if reason is not None:
            self.reasons[reason] = self.reasons.get(reason, 0) + 1


async def _drive_foldwise(raw: list[dict[str, Any]], url: str, meter: Meter, budget: int) -> None:
    settings = Settings(_env_file=None, database_url=url, api_keys="", anthropic_api_key=None)
    app = create_app(settings)
    first_cut = None
    async with app.router.lifespan_context(app):
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://bench") as client:
            session = {"id": "cache-bench", "model": MODEL, "system_prompt": SYSTEM_PROMPT}
            (await client.post("/sessions", json=session)).raise_for_status()
            for index, message in enumerate(raw):
                batch = {"messages": [message]}
                (await client.post("/sessions/cache-bench/messages", json=batch)).raise_for_status()
                if message["role"] != "user":
                    continue
                params = {"max_tokens": budget, "format": "anthropic"}
                response = await client.get("/sessions/cache-bench/context", params=params)
                body = response.raise_for_status().json()
                meter.folds += body["summarized"]
                cut = body["summary"] is not None or body["messages_included"] < index + 1
                first_cut = first_cut if first_cut is not None or not cut else index
                reason = body["usage"].get("cache", {}).get("reason") or "none"
                measured = first_cut is not None and index > first_cut
                meter.observe(as_request(body["system"], body["messages"]), measured, reason)


def _drive_langchain(raw: list[dict[str, Any]], meter: Meter, budget: int) -> None:
    openai_shaped = agent_session(MESSAGES, shape="openai", steps=STEPS, seed=SEED)
    converted = [SystemMessage(content=SYSTEM_PROMPT), *to_langchain(openai_shaped)]
    index_of = {id(m): i for i, m in enumerate(converted)}
    counter, first_cut = langchain_counter(), None
    for index, message in enumerate(raw):
        if message["role"] != "user":
            continue
        history = converted[: index + 2]  # the system message, then raw[: index + 1]
        kept = trim_messages(
            history,
            max_tokens=budget,
            token_counter=counter,
            strategy="last",
            start_on="human",
            include_system=True,
        )
        first_cut = first_cut if first_cut is not None or len(kept) == len(history) else index
        sent = [raw[index_of[id(m)] - 1] for m in kept if not isinstance(m, SystemMessage)]
        meter.observe(as_request(SYSTEM_PROMPT, sent), first_cut is not None and index > first_cut)


def run_cache(budget: int) -> dict[str, Any]:
    raw = agent_session(MESSAGES, steps=STEPS, seed=SEED)
    counter = counter_for(load_registry(Settings(_env_file=None)).get(MODEL))
    tokens: dict[str, int] = {}

    def count(item: str) -> int:
        if item not in tokens:
            tokens[item] = counter.count_text(item)
        return tokens[item]

    foldwise, langchain = Meter("Foldwise", count), Meter("LangChain trim_messages", count)
    with tempfile.TemporaryDirectory() as directory:
        url = f"sqlite:///{directory}/cache.db"
        upgrade_database(url)  # Alembic runs its own event loop
        asyncio.run(_drive_foldwise(raw, url, foldwise, budget))
    _drive_langchain(raw, langchain, budget)
    turns = sum(message["role"] == "user" for message in raw)
    appended = sum(map(count, as_request(None, raw)[1:])) / max(1, turns)
    return {"budget": budget, "sides": (foldwise, langchain), "turn_tokens": appended}


def section(results: Sequence[dict[str, Any]]) -> str:
    rows, reasons = [], []
    for r in results:
        for s in r["sides"]:
            kept, cached = s.kept / max(1, s.turns), s.cached / max(1, s.total)
            cost = s.cost / (r["sides"][1].cost or 1.0)
            rows.append([f"{r['budget']:,}", s.name, s.turns, f"{kept:.1%}", f"{cached:.1%}"])
            rows[-1] += [s.folds, f"{cost:.2f}×"]
        counts = sorted(r["sides"][0].reasons.items())
        reasons.append(f"{r['budget']:,}: " + ", ".join(f"{k} {v}" for k, v in counts))
    header = ["budget", "side", "turns", "request starts with the previous one"]
    header += ["input tokens cacheable", "folds", "cache-weighted input cost"]
    growth = [f"{r['turn_tokens'] / r['budget']:.1%} of {r['budget']:,}" for r in results]
    return doc.render(
        "cache.md.tmpl",
        messages=MESSAGES,
        table=doc.table(header, rows, "rlrrrrr"),
        reasons="; ".join(reasons),
        turn_tokens=f"{results[0]['turn_tokens']:,.0f}",
        growth=", ".join(growth),
    )


if __name__ == "__main__":
    text = section([run_cache(budget) for budget in BUDGETS])
    print(text)
    doc.write(text)
