"""In-process cases: counting an append batch vs tiktoken, assembling vs LangChain's trim,
the first context of a session whose one tool output is 2M characters without a break.

What is measured and how: the *Counting*, *Assembly* and *A 2M-character tool output*
sections of bench/report.md.tmpl. The LangChain side (`to_langchain`, `langchain_counter`) is
shared with bench/cache.py.
"""

from __future__ import annotations

import asyncio
import base64
import json
import random
import statistics
import tempfile
import time
from collections.abc import Callable, Mapping
from typing import Any

import httpx
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage
from langchain_core.messages import trim_messages as lc_trim

from app.core.context_settings import ContextSettings
from app.core.db import upgrade_database
from app.core.settings import Settings
from app.engine.assemble import AssemblyInput, assemble
from app.engine.shapes import normalize_message
from app.main import create_app
from app.schemas.assemble_context import AssembleRequest
from app.services.assemble_context import assemble_posted
from app.services.summarize_context import to_messages
from app.tokens.counter import TiktokenCounter, counter_for
from app.tokens.encodings import get_encoding
from app.tokens.registry import load_registry
from bench.harness import Target, machine, publish, table
from tests.support.transcripts import agent_session

BUDGET = 16_000
MODEL = "gpt-4-turbo"  # cl100k_base, like the LangChain side


def interleaved(
    actions: Mapping[str, Callable[[], Any]], rounds: int, before: Mapping[str, Callable[[], Any]]
) -> dict[str, float]:
    """Median ms per action over `rounds` interleaved rounds (A, B, C, A, …) after one warm-up;
    `before[name]` runs untimed before each call of that action."""
    samples: dict[str, list[float]] = {name: [] for name in actions}
    for index in range(rounds + 1):
        for name, action in actions.items():
            if name in before:
                before[name]()
            started = time.perf_counter()
            action()
            if index:
                samples[name].append((time.perf_counter() - started) * 1000)
    return {name: statistics.median(values) for name, values in samples.items()}


def counting(shape: str, rounds: int = 25) -> dict[str, Any]:
    counter = counter_for(load_registry(Settings()).get("claude-sonnet-4-5"))
    batch = [normalize_message(m, i) for i, m in enumerate(agent_session(1000, shape=shape))]
    texts: list[str] = []
    spy = TiktokenCounter(get_encoding(counter.encoding_name))
    spy._encode = lambda text: texts.append(text) or []  # records what the counter encodes
    for message in batch:
        spy.count_message(message)
    encoding = get_encoding(counter.encoding_name)
    ms = interleaved(
        {
            "app": lambda: [counter.count_message(m) for m in batch],
            "encode": lambda: [encoding.encode(t) for t in texts],
            "ordinary": lambda: [encoding.encode_ordinary(t) for t in texts],
        },
        rounds,
        {"app": counter.clear_cache},  # appended messages are new: cold counting
    )
    tokens = sum(counter.count_message(m) for m in batch)
    return {"shape": shape, "tokens": tokens, "strings": len(texts), **ms}


def assemble_body() -> dict[str, Any]:
    """A `POST /assemble-context` body of 1,000 OpenAI-shaped messages."""
    messages = agent_session(1000, shape="openai", seed=31)
    return {"messages": messages, "model": MODEL, "max_tokens": BUDGET, "format": "openai"}


def langchain_counter() -> Callable[[BaseMessage], int]:
    encoding = get_encoding("cl100k_base")

    def count_tokens(message: BaseMessage) -> int:
        tokens = 3 + len(encoding.encode(message.type)) + len(encoding.encode(message.text))
        for call in getattr(message, "tool_calls", None) or ():
            tokens += 3 + len(encoding.encode(call["name"]))
            tokens += len(encoding.encode(json.dumps(call["args"])))
        if isinstance(message, ToolMessage):
            tokens += len(encoding.encode(message.tool_call_id))
        return tokens

    # trim_messages takes a counter as per-message when its parameter is annotated with the
    # class itself; postponed annotations would leave a string there.
    count_tokens.__annotations__["message"] = BaseMessage
    return count_tokens


def to_langchain(raw: list[dict[str, Any]]) -> list[BaseMessage]:
    """OpenAI-shaped messages as LangChain messages, one for one."""
    out: list[BaseMessage] = []
    for item in raw:
        if item["role"] == "user":
            out.append(HumanMessage(content=item["content"]))
        elif item["role"] == "tool":
            out.append(ToolMessage(item["content"], tool_call_id=item["tool_call_id"]))
        else:
            calls = [
                {"name": c["function"]["name"], "args": json.loads(c["function"]["arguments"])}
                | {"id": c["id"]}
                for c in item.get("tool_calls") or ()
            ]
            out.append(AIMessage(content=item["content"], tool_calls=calls))
    return out


def langchain_trim(raw: list[dict[str, Any]]) -> Callable[[], int]:
    """A call of LangChain's trim on OpenAI-shaped `raw`; returns how many messages it kept."""
    messages, counter = to_langchain(raw), langchain_counter()
    return lambda: len(lc_trim(messages, max_tokens=BUDGET, token_counter=counter, strategy="last"))


def assembly(rounds: int = 9) -> dict[str, Any]:
    settings = Settings()
    registry = load_registry(settings)
    model = registry.get(MODEL)
    counter = counter_for(model)
    body = assemble_body()
    counted = tuple(to_messages(body["messages"], counter))
    request = AssembleRequest(**body)
    engine_input = AssemblyInput(
        messages=counted,
        context_window=model.context_window,
        settings=ContextSettings(),
        max_tokens=BUDGET,
        format="openai",
        mode="never",
    )
    trim = langchain_trim(body["messages"])

    def stateless() -> int:
        return assemble_posted(request, settings, registry).messages_included

    ms = interleaved(
        {
            "engine": lambda: assemble(engine_input, counter),
            "cold": stateless,
            "warm": stateless,
            "langchain": trim,
        },
        rounds,
        {"cold": counter.clear_cache},
    )
    counter.clear_cache()
    kept = assemble(engine_input, counter).messages_included
    tokens = sum(m.tokens for m in counted)
    return {**ms, "tokens": tokens, "kept": kept, "langchain_kept": trim()}


# One tool output of LONG_OUTPUT_CHARS with no blank or line break, read with a budget it
# exceeds (so it is cut), on the session route, in process on SQLite.
LONG_OUTPUT_CHARS = 2_000_000
LONG_OUTPUT_BUDGET = 50_000
LONG_OUTPUT_MODEL = "claude-sonnet-4-5"
LONG_OUTPUT_SHAPES: dict[str, Callable[[int], str]] = {
    "one repeated letter": lambda n: "a" * n,
    "random base64": lambda n: base64.b64encode(random.Random(7).randbytes(n)).decode()[:n],
}


def _long_output_messages(output: str) -> list[dict[str, Any]]:
    call = {"type": "tool_use", "id": "call_1", "name": "read_file", "input": {"path": "x"}}
    result = {"type": "tool_result", "tool_use_id": "call_1", "content": output}
    return [
        {"role": "user", "content": "Read the file."},
        {"role": "assistant", "content": [call]},
        {"role": "user", "content": [result]},
    ]


async def _first_contexts(url: str, output: str, rounds: int) -> dict[str, list[float]]:
    """Per round, a new session holding the output, read once: *cold* with the counter's
    remembered counts forgotten first (another replica, a restart), *warm* as the replica
    that took the append reads it (the output's count remembered)."""
    settings = Settings(_env_file=None, database_url=url, api_keys="", anthropic_api_key=None)
    counter = counter_for(load_registry(settings).get(LONG_OUTPUT_MODEL))
    app, samples = create_app(settings), {"cold": list[float](), "warm": list[float]()}
    body = {"messages": _long_output_messages(output)}
    async with app.router.lifespan_context(app):
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://bench") as client:
            for index in range(rounds):
                for variant, times in samples.items():
                    session_id = f"long-{variant}-{index}"
                    created = {"id": session_id, "model": LONG_OUTPUT_MODEL}
                    (await client.post("/sessions", json=created)).raise_for_status()
                    path = f"/sessions/{session_id}"
                    counter.clear_cache()  # no cut of an earlier round remembered
                    (await client.post(f"{path}/messages", json=body)).raise_for_status()
                    if variant == "cold":
                        counter.clear_cache()
                    started = time.perf_counter()
                    params = {"max_tokens": LONG_OUTPUT_BUDGET}
                    (await client.get(f"{path}/context", params=params)).raise_for_status()
                    times.append((time.perf_counter() - started) * 1000)
    return samples


def long_output(rounds: int = 3) -> list[dict[str, Any]]:
    """Per shape: the first context read (ms, median of `rounds`), cold and warm, against
    the baseline of counting the output once with the same counter, cold (best of 3)."""
    counter = counter_for(load_registry(Settings(_env_file=None)).get(LONG_OUTPUT_MODEL))
    out = []
    for shape, make in LONG_OUTPUT_SHAPES.items():
        output = make(LONG_OUTPUT_CHARS)
        once = []
        for _ in range(3):
            counter.clear_cache()
            started = time.perf_counter()
            tokens = counter.count_text(output)
            once.append((time.perf_counter() - started) * 1000)
        with tempfile.TemporaryDirectory(prefix="foldwise-bench-") as directory:
            url = f"sqlite:///{directory}/long.db"
            upgrade_database(url)  # Alembic runs its own event loop
            samples = asyncio.run(_first_contexts(url, output, rounds))
        medians = {variant: statistics.median(times) for variant, times in samples.items()}
        out.append({"shape": shape, "tokens": tokens, "count": min(once), **medians})
    return out


LONG_OUTPUT_TARGET_S, LONG_OUTPUT_TARGET_RATIO = 1.0, 2.0


def long_output_section(results: list[dict[str, Any]]) -> str:
    m = machine()
    rows = [
        [r["shape"], f"{r['tokens']:,}", f"{r['count']:.0f}",
         f"{r['cold']:.0f}", f"**{r['cold'] / r['count']:.2f}**",
         f"{r['warm']:.0f}", f"**{r['warm'] / r['count']:.2f}**"]
        for r in results
    ]  # fmt: skip
    header = ["output", "tokens", "one count ms", "cold ms", "cold ÷ count", "warm ms"]
    body = table([*header, "warm ÷ count"], rows, "lrrrrrr")
    return f"""## A 2M-character tool output

`python -m bench.inprocess` ({m["date"]}, {m["cpu"]}, commit {m["commit"]}). A session
whose one message is a tool result of {LONG_OUTPUT_CHARS:,} characters without a blank or a
line break (and its call), read once on the session route with a budget of
{LONG_OUTPUT_BUDGET:,} tokens, so the output is cut (in process, SQLite, `{LONG_OUTPUT_MODEL}`,
medians of 3 sessions). *Cold*: the counter's remembered counts forgotten before the read
(another replica, a restart); *warm*: as the replica that took the append reads it. Baseline:
the app's counter counting the output once, cold (best of 3), the least a cold read can do.

{body}

Target: the first context under {LONG_OUTPUT_TARGET_S:.0f} s, cold, and at most
{LONG_OUTPUT_TARGET_RATIO:.0f}× one count of the output.
"""


def long_output_targets(results: list[dict[str, Any]]) -> list[Target]:
    out = []
    for r in results:
        figure = f"first context of a 2M-char tool output ({r['shape']}), cold"
        out.append(Target(f"{figure}, s", r["cold"] / 1000, LONG_OUTPUT_TARGET_S, at_most=True))
        out.append(
            Target(f"{figure} ÷ one count", r["cold"] / r["count"], LONG_OUTPUT_TARGET_RATIO, True)
        )
    return out


if __name__ == "__main__":
    found = long_output()
    publish(long_output_section(found), long_output_targets(found))
