"""What a fold costs at the provider: on a fresh prompt, and on the conversation's cached prefix.

`python -m bench.fold_cost`: a real Claude Code session (../shared/real-transcripts) replayed
turn by turn, a `format=anthropic` context read before each assistant message and sent by the
"client" to a fake Anthropic API on loopback, which bills as Anthropic does (bench/cache_model.py:
a request reads the longest prefix an earlier request marked, writes up to its own last
breakpoint at 1.25×, reads at 0.1×). The first fold of the session starts beside the read that
passes `fold_ahead` × the budget; the budget is set so that happens at ~50k tokens of context.
The same replay runs twice: `summarizer_cached_prefix` off (a fresh prompt) and on (the served
context, then the instruction), with the conversation's own model in both, so the prices
compare. The fake answers both with the same summary; the bench checks it is then sent.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx

from app.core.db import upgrade_database
from app.core.settings import Settings
from app.main import create_app
from app.tokens.counter import counter_for
from app.tokens.registry import load_registry
from bench.cache import AGENT, MODEL
from bench.cache_model import CACHE_READ, CACHE_WRITE, PromptCache, as_request
from bench.harness import Target, machine, publish, render, table
from tests.support.fake_anthropic import FakeAnthropic, Recorded
from tests.support.transcripts import summary_text

CORPUS = Path(__file__).resolve().parents[2] / "shared" / "real-transcripts"
TRANSCRIPT = "codemie-claude-3fe1b6bc.json"  # Claude Code, 134 messages, ~117k tokens
CONTEXT_TOKENS = 50_000  # where the first fold starts (fold_ahead × budget)
FOLD_AHEAD = 0.9  # the LLM default (app/engine/fold_policy.py)
OUTPUT_PRICE = 5.0  # output tokens cost 5× input ones (Claude Sonnet: $3 / $15 per million)
GENERATION = "x-bench-generation"


@dataclass
class Bill:
    input: int = 0
    cache_read: int = 0
    cache_write: int = 0
    output: int = 0

    @property
    def cost(self) -> float:
        """In input-token prices."""
        written = CACHE_WRITE * self.cache_write + CACHE_READ * self.cache_read
        return self.input + written + OUTPUT_PRICE * self.output


@dataclass
class Arm:
    prompt: str
    bill: Bill
    span_tokens: int
    messages_folded: int
    summary_sent: bool


class BillingProvider:
    """The fake Messages API with Anthropic's prompt cache: generations and folds share it."""

    def __init__(self, count: Any) -> None:
        self.count = count
        self.cache = PromptCache()
        self.folds: list[Bill] = []
        self.fake = FakeAnthropic(reply=lambda r: SUMMARY, usage=self.usage)

    def usage(self, request: Recorded, text: str) -> dict[str, int]:
        body = request.body
        billed = as_request(body.get("tools"), body.get("system"), body["messages"])
        read, write, plain = self.cache.bill(billed, self.count)
        output = self.count(text)
        if GENERATION not in request.headers:
            self.folds.append(Bill(plain, read, write, output))
        return {
            "input_tokens": plain,
            "cache_read_input_tokens": read,
            "cache_creation_input_tokens": write,
            "output_tokens": output,
        }


SUMMARY = summary_text()


async def _replay(
    client: httpx.AsyncClient, provider: BillingProvider, raw: list[dict[str, Any]], budget: int
) -> None:
    """Append turn by turn, reading the context and generating before each assistant
    message, until a fold request reaches the provider."""
    url = f"{provider.fake.base_url}/v1/messages"
    async with httpx.AsyncClient(headers={GENERATION: "1"}, timeout=30) as provider_client:
        for message in raw:
            if message["role"] == "assistant":
                params = {"max_tokens": budget, "format": "anthropic"}
                served = (await client.get("/sessions/fold/context", params=params)).json()
                body = {k: served[k] for k in ("system", "messages", "tools") if served[k]}
                generation = {"model": MODEL, "max_tokens": 1024, **body}
                (await provider_client.post(url, json=generation)).raise_for_status()
                for _ in range(50):  # a fold starts beside the read
                    if provider.folds:
                        return
                    await asyncio.sleep(0.01)
            posted = {"messages": [message]}
            (await client.post("/sessions/fold/messages", json=posted)).raise_for_status()
    raise RuntimeError("the transcript ended before a fold")


async def _landed(client: httpx.AsyncClient) -> dict[str, Any]:
    for _ in range(1500):
        page = (await client.get("/sessions/fold/summaries")).json()["summaries"]
        if page:
            return dict(page[0])
        await asyncio.sleep(0.02)
    raise RuntimeError("the fold did not land")


async def run_arm(raw: list[dict[str, Any]], cached: bool) -> Arm:
    registry = load_registry(Settings(_env_file=None))
    provider = BillingProvider(counter_for(registry.get(MODEL)).count_text)
    provider.fake.start()
    with tempfile.TemporaryDirectory() as tmp:
        url = f"sqlite:///{tmp}/fold.db"
        await asyncio.to_thread(upgrade_database, url)
        settings = Settings(
            _env_file=None,
            database_url=url,
            api_keys="",
            anthropic_api_key="sk-ant-bench-000000000000000000",
            anthropic_base_url=provider.fake.base_url,
            summarizer_model=MODEL,
            summarizer_cached_prefix=cached,
            strategy="llm",
        )
        try:
            version, after = await _fold(settings, provider, raw)
        finally:
            provider.fake.stop()
    usage = version["usage"] or {}
    (bill,) = provider.folds
    stats = version["stats"]
    return Arm(
        prompt=str(usage.get("prompt")),
        bill=bill,
        span_tokens=stats["tokens_before"] - stats["tokens_after"],
        messages_folded=stats["messages_folded"],
        summary_sent=SUMMARY.splitlines()[1] in json.dumps(after["system"]),
    )


async def _fold(
    settings: Settings, provider: BillingProvider, raw: list[dict[str, Any]]
) -> tuple[dict[str, Any], dict[str, Any]]:
    """The summary version the first fold wrote, and the context read after it."""
    app = create_app(settings)
    async with app.router.lifespan_context(app):
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://bench") as client:
            session = {
                "id": "fold",
                "model": MODEL,
                "system_prompt": AGENT["system"],
                "tools": AGENT["tools"],
            }
            (await client.post("/sessions", json=session)).raise_for_status()
            budget = round(CONTEXT_TOKENS / FOLD_AHEAD)
            await _replay(client, provider, raw, budget)
            version = await _landed(client)
            params = {"max_tokens": budget, "format": "anthropic"}
            after = (await client.get("/sessions/fold/context", params=params)).json()
    return version, after


def _row(arm: Arm, fresh: Arm) -> list[Any]:
    b = arm.bill
    return [
        arm.prompt, f"{arm.messages_folded} ({arm.span_tokens:,} tokens)",
        f"{b.input:,}", f"{b.cache_read:,}", f"{b.cache_write:,}", f"{b.output:,}",
        f"{b.cost:,.0f}", f"{b.cost / fresh.bill.cost:.2f}×", "yes" if arm.summary_sent else "NO",
    ]  # fmt: skip


async def measure() -> tuple[str, list[Target]]:
    document = json.loads((CORPUS / TRANSCRIPT).read_text("utf-8"))
    raw = document["messages"]
    fresh = await run_arm(raw, cached=False)
    cached = await run_arm(raw, cached=True)
    if not (fresh.summary_sent and cached.summary_sent):
        raise RuntimeError("a fold's summary was not sent in the context after it")
    rows = [_row(fresh, fresh), _row(cached, fresh)]
    ratio = cached.bill.cost / fresh.bill.cost
    targets = [Target("fold cost, cached prefix ÷ fresh prompt", ratio, 0.3, at_most=True)]
    header = ["prompt", "folded", "input", "cache read", "cache write",
              "output", "cost", "÷ fresh", "summary sent"]  # fmt: skip
    m = machine()
    section = render(
        "fold_cost.md.tmpl",
        machine=f"{m['date']}, {m['cpu']}, {m['cores']} cores, commit {m['commit']}",
        transcript=TRANSCRIPT,
        context=f"{CONTEXT_TOKENS:,}",
        table=table(header, rows, "lrrrrrrrl"),
    )
    return section, targets


def main() -> None:
    argparse.ArgumentParser(description=__doc__).parse_args()
    section, targets = asyncio.run(measure())
    publish(section, targets)


if __name__ == "__main__":
    main()
