"""Case 4: assembling a 1,000-message history under a budget, Foldwise vs LangChain.

Both sides get the same 1,000 OpenAI-shaped messages (~124k tokens) and the same budget
(16,000 tokens), and both count with tiktoken cl100k_base. LangChain runs
`trim_messages(strategy="last")` with a per-message tiktoken counter built like the OpenAI
cookbook's (3 framing tokens + role + content + tool calls) — the form its docs recommend.

Foldwise is timed in-process three ways, because they answer different questions:
- `engine`: `assemble()` over messages whose counts are already known — what
  `GET /sessions/{id}/context` runs per request (counts are stored at append);
- `stateless`: `app.services.assemble_context.assemble_posted` on the parsed request body — the
  whole of `POST /assemble-context` minus HTTP and JSON (validate and count every posted
  message, then `assemble()`);
- and, in run.py, the same route over HTTP on the production server.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from langchain_core.messages import (
    AIMessage,
    BaseMessage,
    HumanMessage,
    ToolMessage,
    trim_messages,
)

from app.core.settings import Settings
from app.engine.assemble import AssemblyInput, assemble
from app.engine.budget import ContextSettings
from app.engine.types import Message
from app.schemas.assemble_context import AssembleRequest
from app.services.assemble_context import assemble_posted
from app.services.summarize_context import to_messages
from app.tokens.counter import counter_for
from app.tokens.encodings import get_encoding
from app.tokens.registry import ModelInfo, load_registry
from bench.conversation import transcript
from bench.timing import interleaved_medians, ratio

MESSAGES = 1000
BUDGET_TOKENS = 16_000
# cl100k_base, like the LangChain side; OpenAI shape, so both sides read the same messages.
MODEL = "gpt-4-turbo"
ROUNDS = 9


@dataclass(frozen=True, slots=True)
class AssembleResult:
    messages: int
    input_tokens: int
    budget: int
    engine_seconds: float
    stateless_seconds: float
    """Cold: no remembered counts (a history posted for the first time)."""
    stateless_warm_seconds: float
    """Warm: the same history posted again (counts of long texts remembered)."""
    langchain_seconds: float
    foldwise_kept: int
    langchain_kept: int

    @property
    def engine_speedup(self) -> float:
        return ratio(self.langchain_seconds, self.engine_seconds)

    @property
    def stateless_speedup(self) -> float:
        return ratio(self.langchain_seconds, self.stateless_seconds)

    @property
    def stateless_warm_speedup(self) -> float:
        return ratio(self.langchain_seconds, self.stateless_warm_seconds)


def bench_messages(seed: int = 31) -> list[dict[str, Any]]:
    return transcript(MESSAGES, shape="openai", seed=seed)


def assemble_body(seed: int = 31) -> dict[str, Any]:
    """The `POST /assemble-context` request body for the same messages and budget (another
    seed gives a history of the same shape whose texts were never counted before)."""
    return {
        "messages": bench_messages(seed),
        "model": MODEL,
        "max_tokens": BUDGET_TOKENS,
        "format": "openai",
    }


def to_langchain(raw: list[dict[str, Any]]) -> list[BaseMessage]:
    converted: list[BaseMessage] = []
    for item in raw:
        if item["role"] == "user":
            converted.append(HumanMessage(content=item["content"]))
        elif item["role"] == "tool":
            converted.append(
                ToolMessage(content=item["content"], tool_call_id=item["tool_call_id"])
            )
        else:
            calls = [
                {
                    "name": call["function"]["name"],
                    "args": json.loads(call["function"]["arguments"]),
                    "id": call["id"],
                }
                for call in item.get("tool_calls") or ()
            ]
            converted.append(AIMessage(content=item["content"], tool_calls=calls))
    return converted


def langchain_counter() -> Any:
    encoding = get_encoding("cl100k_base")

    def count_tokens(message: BaseMessage) -> int:
        tokens = 3 + len(encoding.encode(message.type)) + len(encoding.encode(message.text))
        for call in getattr(message, "tool_calls", None) or ():
            tokens += 3 + len(encoding.encode(call["name"]))
            tokens += len(encoding.encode(json.dumps(call["args"])))
        if isinstance(message, ToolMessage):
            tokens += len(encoding.encode(message.tool_call_id))
        return tokens

    # trim_messages treats a counter as per-message when its parameter is annotated with
    # the BaseMessage class itself; postponed annotations would leave the string instead.
    count_tokens.__annotations__["message"] = BaseMessage
    return count_tokens


def langchain_trimmer(raw: list[dict[str, Any]]) -> Callable[[], int]:
    """A zero-argument call of LangChain's trim on `raw`; returns how many messages it kept."""
    messages = to_langchain(raw)
    counter = langchain_counter()

    def trim() -> int:
        kept = trim_messages(
            messages, max_tokens=BUDGET_TOKENS, token_counter=counter, strategy="last"
        )
        return len(kept)

    return trim


def run_assemble() -> AssembleResult:
    model = load_registry_model()
    counter = counter_for(model)
    raw = bench_messages()
    counted = tuple(to_messages(raw, counter))
    langchain = langchain_trimmer(raw)

    def request(messages: tuple[Message, ...]) -> AssemblyInput:
        return AssemblyInput(
            messages=messages,
            context_window=model.context_window,
            settings=ContextSettings(),
            max_tokens=BUDGET_TOKENS,
            format="openai",
            mode="never",
        )

    def engine() -> int:
        return assemble(request(counted), counter).messages_included

    settings = Settings()
    registry = load_registry(settings)
    body = AssembleRequest(**assemble_body())

    def stateless() -> int:
        return assemble_posted(body, settings, registry).messages_included

    medians = interleaved_medians(
        {
            "engine": engine,
            "stateless": stateless,
            "stateless_warm": stateless,
            "langchain": langchain,
        },
        rounds=ROUNDS,
        # Cold: the counter's cache of long-text counts is emptied before each call; warm:
        # the same history again, as a client re-posts it before the next generation.
        setup={"stateless": counter.clear_cache},
    )
    counter.clear_cache()
    return AssembleResult(
        messages=len(raw),
        input_tokens=sum(m.tokens for m in counted),
        budget=BUDGET_TOKENS,
        engine_seconds=medians["engine"],
        stateless_seconds=medians["stateless"],
        stateless_warm_seconds=medians["stateless_warm"],
        langchain_seconds=medians["langchain"],
        foldwise_kept=engine(),
        langchain_kept=langchain(),
    )


def load_registry_model() -> ModelInfo:
    return load_registry(Settings()).get(MODEL)
