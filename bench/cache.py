"""Prompt-cache bench: a long agent session driven turn by turn, Foldwise vs LangChain.

`python -m bench.cache` (also part of `make bench`). Foldwise runs in process (SQLite,
httpx's ASGI transport); LangChain's `trim_messages` trims the same history to the same
budget. The provider's cache is modelled in bench/cache_model.py; what is measured and how:
bench/cache.md.tmpl, the text of its section in docs/benchmarks.md.
"""

from __future__ import annotations

import asyncio
import json
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
from langchain_core.messages import SystemMessage, trim_messages

from app.core.db import upgrade_database
from app.core.settings import Settings
from app.main import create_app
from app.tokens.counter import counter_for
from app.tokens.registry import load_registry
from bench.cache_model import Meter, Request, as_request
from bench.harness import render, table, write
from bench.inprocess import langchain_counter, to_langchain
from tests.support.transcripts import agent_session

MODEL = "claude-sonnet-4-5"
# The budget, where the session is ~18× the budget, and a roomier one (~7×): a fold
# can only free what the budget holds, so the share of breaks falls as the budget grows.
BUDGETS = (12_000, 32_000)
MESSAGES, STEPS, SEED = 520, 11, 8  # STEPS: tool steps per user turn
SMALL_PROMPT = (
    "You are a careful coding agent working in a Python repository. Read before you edit, "
    "run the tests after every change, and explain each step in one sentence. "
) * 4


@dataclass(frozen=True)
class Setup:
    name: str
    system_prompt: str
    tools: list[dict[str, Any]] | None


# A coding agent's ~2,300 tokens of instructions and tools, the same on every request.
AGENT = json.loads(Path(__file__).with_name("agent_setup.json").read_text("utf-8"))
SETUPS = (
    Setup("small", SMALL_PROMPT, None),
    Setup("agent", AGENT["system"], AGENT["tools"]),
)


async def _drive_foldwise(
    raw: list[dict[str, Any]], url: str, meter: Meter, budget: int, setup: Setup
) -> None:
    # A chat's pace: the rule fold a read needs lands before it is served (in milliseconds,
    # within the default quarter-second wait on a quiet machine). The wait is set so a busy
    # machine cannot turn a fold into a fitted context here: this bench measures the policy's
    # prompt cache; bench/turn.py measures its timing.
    settings = Settings(
        _env_file=None,
        database_url=url,
        api_keys="",
        anthropic_api_key=None,
        fold_hard_wait_s=30.0,
    )
    app = create_app(settings)
    first_cut, version = None, 0
    async with app.router.lifespan_context(app):
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://bench") as client:
            session = {"id": "cache-bench", "model": MODEL, "system_prompt": setup.system_prompt}
            (
                await client.post("/sessions", json={**session, "tools": setup.tools})
            ).raise_for_status()
            for index, message in enumerate(raw):
                batch = {"messages": [message]}
                (await client.post("/sessions/cache-bench/messages", json=batch)).raise_for_status()
                if message["role"] != "user":
                    continue
                params = {"max_tokens": budget, "format": "anthropic"}
                response = await client.get("/sessions/cache-bench/context", params=params)
                body = response.raise_for_status().json()
                # A fold lands in this request or beside the requests (folds ahead of need).
                summary_version = body["summary"]["version"] if body["summary"] else 0
                meter.folds += summary_version - version
                version = summary_version
                cut = body["summary"] is not None or body["messages_included"] < index + 1
                first_cut = first_cut if first_cut is not None or not cut else index
                reason = body["usage"].get("cache", {}).get("reason") or "none"
                measured = first_cut is not None and index > first_cut
                request = as_request(body["tools"], body["system"], body["messages"])
                meter.observe(request, measured, reason)


def _drive_langchain(
    raw: list[dict[str, Any]], meter: Meter, budget: int, setup: Setup, tools_tokens: int
) -> None:
    openai_shaped = agent_session(MESSAGES, shape="openai", steps=STEPS, seed=SEED)
    converted = [SystemMessage(content=setup.system_prompt), *to_langchain(openai_shaped)]
    index_of = {id(m): i for i, m in enumerate(converted)}
    counter, first_cut = langchain_counter(), None
    for index, message in enumerate(raw):
        if message["role"] != "user":
            continue
        history = converted[: index + 2]  # the system message, then raw[: index + 1]
        kept = trim_messages(
            history,
            max_tokens=budget - tools_tokens,  # the tools are sent too: the same budget
            token_counter=counter,
            strategy="last",
            start_on="human",
            include_system=True,
        )
        first_cut = first_cut if first_cut is not None or len(kept) == len(history) else index
        sent = [raw[index_of[id(m)] - 1] for m in kept if not isinstance(m, SystemMessage)]
        request = as_request(setup.tools, setup.system_prompt, sent)
        # A careful client's breakpoints: the end of the system prompt, the newest message.
        system_end = 1 if setup.tools else 0
        marked = [i in (system_end, len(request.elements) - 1) for i in range(len(request.marked))]
        measured = first_cut is not None and index > first_cut
        meter.observe(Request(request.elements, marked), measured)


def run_cache(budget: int, setup: Setup = SETUPS[0]) -> dict[str, Any]:
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
        asyncio.run(_drive_foldwise(raw, url, foldwise, budget, setup))
    tools_tokens = counter.count_tools(setup.tools) if setup.tools else 0
    _drive_langchain(raw, langchain, budget, setup, tools_tokens)
    turns = sum(message["role"] == "user" for message in raw)
    appended = sum(map(count, as_request(None, None, raw).elements)) / max(1, turns)
    sides = (foldwise, langchain)
    return {"budget": budget, "setup": setup.name, "sides": sides, "turn_tokens": appended}


def runs() -> list[dict[str, Any]]:
    """Every setup at every budget."""
    return [run_cache(budget, setup) for setup in SETUPS for budget in BUDGETS]


def section(results: Sequence[dict[str, Any]]) -> str:
    rows, reasons = [], []
    for r in results:
        for s in r["sides"]:
            kept, cached = s.kept / max(1, s.turns), s.cached / max(1, s.total)
            cost = s.cost / (r["sides"][1].cost or 1.0)
            rows.append([r["setup"], f"{r['budget']:,}", s.name, s.turns, f"{kept:.1%}"])
            rows[-1].append(f"{cached:.1%}")
            rows[-1] += [s.folds, f"{cost:.2f}×"]
        counts = sorted(r["sides"][0].reasons.items())
        reasons.append(f"{r['setup']} {r['budget']:,}: " + ", ".join(f"{k} {v}" for k, v in counts))
    header = ["setup", "budget", "side", "turns", "request starts with the previous one"]
    header += ["input tokens cacheable", "folds", "cache-weighted input cost"]
    growth = [f"{r['turn_tokens'] / b:.1%} of {b:,}" for r in results[:1] for b in BUDGETS]
    return render(
        "cache.md.tmpl",
        messages=MESSAGES,
        table=table(header, rows, "lrlrrrrr"),
        reasons="; ".join(reasons),
        turn_tokens=f"{results[0]['turn_tokens']:,.0f}",
        growth=", ".join(growth),
    )


if __name__ == "__main__":
    text = section(runs())
    print(text)
    write(text)
