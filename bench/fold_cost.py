"""What a fold costs at the provider: on a fresh prompt, and on the conversation's cached prefix.

`python -m bench.fold_cost`: a real Claude Code session (../shared/real-transcripts) replayed
turn by turn, a context read before each assistant message and sent by the "client" to a fake
provider API on loopback, which bills its prompt cache as the provider does
(bench/cache_model.py): Anthropic's (`format=anthropic`; a request reads the longest prefix an
earlier one marked, writes up to its own last breakpoint at 1.25×, reads at 0.1×) and
OpenAI's automatic one (`format=openai_responses`; the longest prefix sent before, from
1,024 tokens in steps of 128, at GPT-5's 0.1×). The first fold starts beside the read that
passes `fold_ahead` × the budget, set so that happens at ~50k tokens of context. Each replay
runs twice: `summarizer_cached_prefix` off (a fresh prompt) and on (the served context, then
the instruction), with the conversation's own model in both, so the prices compare. The fake
answers both with the same summary; the bench checks it is then sent.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx

from app.core.db import upgrade_database
from app.core.settings import Settings
from app.main import create_app
from app.tokens.counter import counter_for
from app.tokens.registry import load_registry
from bench.cache import AGENT
from bench.cache_model import AutomaticCache, PromptCache, as_request
from bench.harness import Target, machine, publish, render, table
from tests.support.fake_anthropic import FakeAnthropic
from tests.support.fake_http import FakeModelAPI, Recorded
from tests.support.fake_openai import FakeOpenAI
from tests.support.transcripts import summary_text

CORPUS = Path(__file__).resolve().parents[2] / "shared" / "real-transcripts"
TRANSCRIPT = "codemie-claude-3fe1b6bc.json"  # Claude Code, 134 messages, ~117k tokens
CONTEXT_TOKENS = 50_000  # where the first fold starts (fold_ahead × budget)
FOLD_AHEAD = 0.9  # the LLM default (app/engine/fold_policy.py)
GENERATION = "x-bench-generation"
SUMMARY = summary_text()
KEY = "sk-bench-0000000000000000000000"


@dataclass
class Bill:
    input: int = 0
    cache_read: int = 0
    cache_write: int = 0
    output: int = 0


@dataclass(frozen=True)
class Prices:
    """Per token, in input-token prices."""

    cache_read: float
    cache_write: float
    output: float

    def cost(self, bill: Bill) -> float:
        cached = self.cache_read * bill.cache_read + self.cache_write * bill.cache_write
        return bill.input + cached + self.output * bill.output


class BillingProvider:
    """A fake provider API with its prompt cache: the client's generations and Foldwise's
    folds share it; the folds' bills are kept."""

    def __init__(self, fmt: str, count: Callable[[str], int]) -> None:
        self.format, self.count = fmt, count
        self.folds: list[Bill] = []
        self.fake: FakeModelAPI
        if fmt == "anthropic":
            self.marked = PromptCache()
            self.fake = FakeAnthropic(reply=lambda r: SUMMARY, usage=self._anthropic)
        else:
            self.automatic = AutomaticCache()
            self.fake = FakeOpenAI(reply=lambda r: SUMMARY, billing=self._openai)

    def _anthropic(self, request: Recorded, text: str) -> dict[str, int]:
        body = request.body
        billed = as_request(body.get("tools"), body.get("system"), body["messages"])
        read, write, plain = self.marked.bill(billed, self.count)
        self._keep(request, Bill(plain, read, write, self.count(text)))
        return {
            "input_tokens": plain,
            "cache_read_input_tokens": read,
            "cache_creation_input_tokens": write,
            "output_tokens": self.count(text),
        }

    def _openai(self, request: Recorded) -> tuple[int, int]:
        body = request.body
        head = [json.dumps(body.get("tools"), sort_keys=True), str(body.get("instructions"))]
        items = [json.dumps(item, sort_keys=True) for item in body["input"]]
        plain, read = self.automatic.bill(head + items, self.count)
        self._keep(request, Bill(plain, read, 0, self.count(SUMMARY)))
        return plain, read

    def _keep(self, request: Recorded, bill: Bill) -> None:
        if GENERATION not in request.headers:
            self.folds.append(bill)

    def generation(self, model: str, served: dict[str, Any]) -> tuple[str, dict[str, Any]]:
        """The client's request for `served`: the provider's path and body."""
        if self.format == "anthropic":
            body = {k: served[k] for k in ("system", "messages", "tools") if served[k]}
            return "/v1/messages", {"model": model, "max_tokens": 1024, **body}
        body = {"model": model, "instructions": served["system"], "input": served["messages"]}
        return "/v1/responses", {**body, **({"tools": served["tools"]} if served["tools"] else {})}


@dataclass(frozen=True)
class Provider:
    name: str
    format: str
    model: str
    prices: Prices

    def settings(self, fake: FakeModelAPI) -> dict[str, Any]:
        if self.format == "anthropic":
            return {"anthropic_api_key": KEY, "anthropic_base_url": fake.base_url}
        return {
            "openai_api_key": KEY,
            "openai_base_url": f"{fake.base_url}/v1",
            "summarizer_provider": "openai",
        }


PROVIDERS = (
    # Claude Sonnet: $3 input, $15 output per million; cache reads 0.1×, writes 1.25×.
    Provider("Anthropic", "anthropic", "claude-sonnet-4-5", Prices(0.1, 1.25, 5.0)),
    # GPT-5: $1.25 input, $0.125 cached, $10 output per million; no write surcharge.
    Provider("OpenAI Responses", "openai_responses", "gpt-5", Prices(0.1, 1.0, 8.0)),
)


@dataclass
class Arm:
    prompt: str
    bill: Bill
    span_tokens: int
    messages_folded: int
    summary_sent: bool


async def _replay(
    client: httpx.AsyncClient,
    provider: BillingProvider,
    model: str,
    raw: list[dict[str, Any]],
    budget: int,
) -> None:
    """Append turn by turn, reading the context and generating before each assistant
    message, until a fold request reaches the provider."""
    params = {"max_tokens": budget, "format": provider.format}
    async with httpx.AsyncClient(headers={GENERATION: "1"}, timeout=30) as provider_client:
        for message in raw:
            if message["role"] == "assistant":
                served = (await client.get("/sessions/fold/context", params=params)).json()
                path, body = provider.generation(model, served)
                (
                    await provider_client.post(provider.fake.base_url + path, json=body)
                ).raise_for_status()
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


async def _fold(
    settings: Settings, spec: Provider, provider: BillingProvider, raw: list[dict[str, Any]]
) -> tuple[dict[str, Any], dict[str, Any]]:
    """The summary version the first fold wrote, and the context read after it."""
    app = create_app(settings)
    async with app.router.lifespan_context(app):
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://bench") as client:
            session = {
                "id": "fold",
                "model": spec.model,
                "system_prompt": AGENT["system"],
                "tools": AGENT["tools"],
            }
            (await client.post("/sessions", json=session)).raise_for_status()
            budget = round(CONTEXT_TOKENS / FOLD_AHEAD)
            await _replay(client, provider, spec.model, raw, budget)
            version = await _landed(client)
            params = {"max_tokens": budget, "format": spec.format}
            after = (await client.get("/sessions/fold/context", params=params)).json()
    return version, after


async def run_arm(spec: Provider, raw: list[dict[str, Any]], cached: bool) -> Arm:
    registry = load_registry(Settings(_env_file=None))
    provider = BillingProvider(spec.format, counter_for(registry.get(spec.model)).count_text)
    provider.fake.start()
    with tempfile.TemporaryDirectory() as tmp:
        url = f"sqlite:///{tmp}/fold.db"
        await asyncio.to_thread(upgrade_database, url)
        settings = Settings(
            _env_file=None,
            database_url=url,
            api_keys="",
            summarizer_model=spec.model,
            summarizer_cached_prefix=cached,
            strategy="llm",
            **spec.settings(provider.fake),
        )
        try:
            version, after = await _fold(settings, spec, provider, raw)
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


def _row(spec: Provider, arm: Arm, fresh: Arm) -> list[Any]:
    b, cost = arm.bill, spec.prices.cost
    return [
        spec.name, arm.prompt, f"{arm.messages_folded} ({arm.span_tokens:,} tokens)",
        f"{b.input:,}", f"{b.cache_read:,}", f"{b.cache_write:,}", f"{b.output:,}",
        f"{cost(b):,.0f}", f"{cost(b) / cost(fresh.bill):.2f}×",
    ]  # fmt: skip


async def measure() -> tuple[str, list[Target]]:
    document = json.loads((CORPUS / TRANSCRIPT).read_text("utf-8"))
    raw = document["messages"]
    rows, targets = [], []
    for spec in PROVIDERS:
        fresh = await run_arm(spec, raw, cached=False)
        cached = await run_arm(spec, raw, cached=True)
        if not (fresh.summary_sent and cached.summary_sent):
            raise RuntimeError("a fold's summary was not sent in the context after it")
        rows += [_row(spec, fresh, fresh), _row(spec, cached, fresh)]
        ratio = spec.prices.cost(cached.bill) / spec.prices.cost(fresh.bill)
        figure = f"fold cost, cached prefix ÷ fresh prompt ({spec.name})"
        targets.append(Target(figure, ratio, 0.3, at_most=True))
    header = ["provider", "prompt", "folded", "input", "cache read", "cache write",
              "output", "cost", "÷ fresh"]  # fmt: skip
    m = machine()
    section = render(
        "fold_cost.md.tmpl",
        machine=f"{m['date']}, {m['cpu']}, {m['cores']} cores, commit {m['commit']}",
        transcript=TRANSCRIPT,
        context=f"{CONTEXT_TOKENS:,}",
        table=table(header, rows, "llrrrrrrr"),
    )
    return section, targets


def main() -> None:
    argparse.ArgumentParser(description=__doc__).parse_args()
    section, targets = asyncio.run(measure())
    publish(section, targets)


if __name__ == "__main__":
    main()
