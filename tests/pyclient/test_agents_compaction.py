"""The Agents SDK's `OpenAIResponsesCompactionSession` wrapping `FoldwiseSession`: the host
contract of `responses.compact`, tested as the SDK tests its own sessions. A real `Runner` with
the SDK's Responses model runs against a fake Responses API that also compacts
(`CompactingProviders`), next to the SDK's own `SQLiteSession` (in memory).

What the compaction session does with the session it wraps (openai-agents 0.24.0, its
`memory/openai_responses_compaction_session.py`; `Recording` below records it):

- `get_items`, `add_items`, `pop_item` and `clear_session` are passed through (a pop or a clear
  also drops its cached compaction candidates).
- After each turn that got a response, `Runner` calls `run_compaction({"response_id", "force"})`.
  The hook `should_trigger_compaction` sees the candidates: the stored items that are neither
  user messages nor compaction items. A turn that ran a local tool defers the decision; the
  turn's next response then forces the compaction.
- Automatic compaction first proves that the stored history is the latest model exchange.
  `SQLiteSession` has `_get_compaction_snapshot` and may replace a matched suffix atomically.
  Any other session (`FoldwiseSession`) needs its whole history, read with
  `get_items(limit=len(exchange) + 1)`, equal item by item (each item's JSON, ids included) to
  the model's input plus its output. Otherwise the SDK logs a warning and skips the compaction.
- It then calls `responses.compact(model=…, previous_response_id=…)` (`input=…` when the last
  response was not stored), reads every item (`get_items(limit=2**31 - 1)`, for the rollback),
  calls `clear_session()`, and finally `add_items(output)` with the compaction's output (the
  kept user messages, then the compaction item). If that fails, clear + add restores the
  history it read.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Callable, Iterator
from typing import Any, cast

import pytest
from agents import Agent, Runner, function_tool, set_tracing_disabled
from agents.items import TResponseInputItem
from agents.memory import Session, SQLiteSession
from agents.memory.openai_responses_compaction_session import OpenAIResponsesCompactionSession
from agents.models.openai_responses import OpenAIResponsesModel
from foldwise_client import AsyncFoldwise
from foldwise_client.agents import FoldwiseSession
from openai import AsyncOpenAI

from tests.pyclient.conftest import new_id
from tests.pyclient.fake_providers import CompactingProviders
from tests.support.servers import Server

set_tracing_disabled(True)

COMPACTION_MODEL = "gpt-4.1"
# Turn 1 leaves one candidate (the answer), so nothing is compacted. In turn 2 the tool call and
# its output make three: the decision is deferred past the local tool and forced by the final
# answer. Turn 3 starts after the compaction item with a single candidate again.
THRESHOLD = 3
TURNS = ["Hello, I am planning a trip.", "What is the weather in Paris?", "Thanks, noted."]
ANSWERS = [f"Noted: {TURNS[0]}", "The tool says: sunny in Paris", f"Noted: {TURNS[2]}"]
ALL_ITEMS = 2_147_483_647  # the limit the SDK reads "every item" with


@pytest.fixture(scope="module")
def providers() -> Iterator[CompactingProviders]:
    started = CompactingProviders().start()
    try:
        yield started
    finally:
        started.stop()


@pytest.fixture
async def foldwise(server: Server) -> AsyncIterator[AsyncFoldwise]:
    client = AsyncFoldwise(server.base_url)
    yield client
    await client.close()


@pytest.fixture
async def openai_client(providers: CompactingProviders) -> AsyncIterator[AsyncOpenAI]:
    client = AsyncOpenAI(base_url=providers.base_url + "/v1", api_key="test")
    yield client
    await client.close()


@function_tool
def get_weather(city: str) -> str:
    """The weather in a city."""
    return f"sunny in {city}"


def travel_agent(openai_client: AsyncOpenAI) -> Agent[Any]:
    return Agent(
        name="Travel",
        instructions="You help plan trips.",
        tools=[get_weather],
        model=OpenAIResponsesModel(model=COMPACTION_MODEL, openai_client=openai_client),
    )


def enough_candidates(context: dict[str, Any]) -> bool:
    return len(context["compaction_candidate_items"]) >= THRESHOLD


def compacting(underlying: Session, openai_client: AsyncOpenAI) -> OpenAIResponsesCompactionSession:
    return OpenAIResponsesCompactionSession(
        session_id=underlying.session_id,
        underlying_session=underlying,
        client=openai_client,
        model=COMPACTION_MODEL,
        should_trigger_compaction=enough_candidates,
    )


def as_text(text: str) -> str:
    return text


def as_message(text: str) -> list[TResponseInputItem]:
    """A user turn as a Responses message item: the shape Foldwise serves stored user text in."""
    item = {"type": "message", "role": "user", "content": [{"type": "input_text", "text": text}]}
    return cast(list[TResponseInputItem], [item])


UserInput = Callable[[str], str | list[TResponseInputItem]]


class Recording(FoldwiseSession):
    """A FoldwiseSession that records what the compaction session asks of it."""

    def __init__(self, session_id: str, *, client: AsyncFoldwise) -> None:
        super().__init__(session_id, client=client)
        self.calls: list[tuple[Any, ...]] = []

    async def get_items(self, limit: int | None = None) -> list[TResponseInputItem]:
        self.calls.append(("get_items", limit))
        return await super().get_items(limit)

    async def add_items(self, items: list[TResponseInputItem]) -> None:
        self.calls.append(("add_items", json.loads(json.dumps(items))))
        await super().add_items(items)

    async def pop_item(self) -> TResponseInputItem | None:
        self.calls.append(("pop_item",))
        return await super().pop_item()

    async def clear_session(self) -> None:
        self.calls.append(("clear_session",))
        await super().clear_session()


async def got(session: Session) -> list[dict[str, Any]]:
    return cast(list[dict[str, Any]], await session.get_items())


def text_of(item: dict[str, Any]) -> str:
    """A message item's text, whether its content is a string or a list of parts."""
    content = item["content"]
    return content if isinstance(content, str) else "".join(p["text"] for p in content)


def same_json(served: Any, stored: Any) -> bool:
    """Byte for byte as JSON: the same keys and values, the encrypted content untouched. Key
    order is not compared: PostgreSQL's JSONB keeps its own, and the SDK and the API do not
    read it (the SDK matches items by `json.dumps(..., sort_keys=True)`)."""
    return json.dumps(served, sort_keys=True) == json.dumps(stored, sort_keys=True)


def from_compaction(items: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The items from the latest compaction item on (all of them without one)."""
    starts = [i for i, item in enumerate(items) if item.get("type") == "compaction"]
    return items[starts[-1] :] if starts else items


def canonical(value: Any) -> Any:
    """`value` with the ids the API and the SDK generate (item and call ids, the encrypted
    content) numbered in order of appearance, so two runs compare equal when they agree."""
    seen: dict[str, str] = {}

    def walk(node: Any) -> Any:
        if isinstance(node, list):
            return [walk(v) for v in node]
        if not isinstance(node, dict):
            return node
        out = {}
        for key, v in node.items():
            if key in ("id", "call_id", "encrypted_content") and isinstance(v, str):
                v = seen.setdefault(v, f"<{key} {len(seen)}>")
            out[key] = walk(v)
        return out

    return walk(value)


async def run_turns(
    session: OpenAIResponsesCompactionSession,
    openai_client: AsyncOpenAI,
    providers: CompactingProviders,
    user_input: UserInput,
) -> dict[str, Any]:
    """Runs TURNS; returns what each turn answered, the compactions done after each turn, and
    the model requests (inputs) and compaction answers of this run only."""
    agent = travel_agent(openai_client)
    first_request, first_compaction = len(providers.requests["responses"]), len(providers.compacted)
    answers, compactions_after = [], []
    for text in TURNS:
        result = await Runner.run(agent, user_input(text), session=session)
        answers.append(result.final_output)
        compactions_after.append(len(providers.compacted) - first_compaction)
    return {
        "answers": answers,
        "compactions_after": compactions_after,
        "inputs": [r["input"] for r in providers.requests["responses"][first_request:]],
        "compacted": providers.compacted[first_compaction:],
    }


@pytest.mark.parametrize(
    "user_input",
    [
        pytest.param(as_message, id="message-items"),
        pytest.param(as_text, id="text"),
    ],
)
async def test_an_agent_run_compacts_into_foldwise(
    foldwise: AsyncFoldwise,
    openai_client: AsyncOpenAI,
    providers: CompactingProviders,
    user_input: UserInput,
) -> None:
    sid = new_id("compaction")
    underlying = Recording(sid, client=foldwise)
    session = compacting(underlying, openai_client)

    run = await run_turns(session, openai_client, providers, user_input)

    assert run["answers"] == ANSWERS
    assert run["compactions_after"] == [0, 1, 1], "compacted once, at the end of turn 2"
    compacted = run["compacted"][0]
    item = compacted["output"][-1]
    assert item["type"] == "compaction" and providers.issued[item["id"]] == item
    kept = compacted["output"][:-1]
    assert [text_of(message) for message in kept] == TURNS[:2]

    # The SDK replaced the history: read it all, cleared it, appended the compaction's output.
    replaced = underlying.calls.index(("clear_session",))
    assert underlying.calls[replaced - 1] == ("get_items", ALL_ITEMS)
    assert underlying.calls[replaced + 1] == ("add_items", compacted["output"])
    added = underlying.calls[replaced + 1][1][-1]  # the item as the SDK stored it
    assert ("pop_item",) not in underlying.calls

    # Stored verbatim: the compaction item is the whole content of one assistant message.
    stored = [m async for m in foldwise.iter_messages(sid)]
    holders = [m for m in stored if m["content"] == [item]]
    assert len(holders) == 1 and holders[0]["role"] == "assistant"
    holder = holders[0]
    assert same_json(holder["content"], [added])

    # get_items serves it as the SDK stored it, then what followed it (turn 3).
    items = await got(session)
    at = items.index(item)
    assert same_json(items[at], added)
    assert [i.get("role") for i in items[at + 1 :]] == ["user", "assistant"]
    assert [text_of(i) for i in items[at + 1 :]] == [TURNS[2], ANSWERS[2]]

    # The next model request (turn 3) carried the compaction item and what followed, and the
    # API took it (it answers a 400 to a compaction item it did not issue, or one altered).
    turn3 = run["inputs"][-1]
    assert from_compaction(turn3)[0] == item
    assert [(i.get("role"), text_of(i)) for i in from_compaction(turn3)[1:]] == [("user", TURNS[2])]

    # The context (explain): the compaction item and what follows are sent; nothing from before
    # the SDK's clear is sent or explained. (Before the item, in this context, are only the kept
    # user messages: what Foldwise does with them is test_kept_user_messages_are_served.)
    context = await foldwise.context(sid, format="openai_responses", explain=True)
    assert from_compaction(context.messages)[0] == item
    assert context.explain is not None
    status = {entry["seq"]: entry["status"] for entry in context.explain}
    assert [s for seq, s in status.items() if seq >= holder["seq"]] == ["included"] * 3
    assert len([seq for seq in status if seq < holder["seq"]]) == 2, "the kept user messages"


async def test_items_after_the_compaction_item_match_sqlite_session(
    foldwise: AsyncFoldwise, openai_client: AsyncOpenAI, providers: CompactingProviders
) -> None:
    """Side by side with SQLiteSession (message-item input):
    from the compaction item on, the model sees and get_items returns the same items."""
    sqlite = SQLiteSession(new_id("sqlite"))
    try:
        sqlite_session = compacting(sqlite, openai_client)
        sqlite_run = await run_turns(sqlite_session, openai_client, providers, as_message)
        sqlite_items = await got(sqlite_session)
    finally:
        sqlite.close()
    foldwise_session = compacting(FoldwiseSession(new_id("fw"), client=foldwise), openai_client)
    foldwise_run = await run_turns(foldwise_session, openai_client, providers, as_message)
    foldwise_items = await got(foldwise_session)

    assert sqlite_run["answers"] == foldwise_run["answers"] == ANSWERS
    assert sqlite_run["compactions_after"] == foldwise_run["compactions_after"] == [0, 1, 1]
    assert len(sqlite_run["inputs"]) == len(foldwise_run["inputs"]) == 4
    assert [canonical(from_compaction(i)) for i in foldwise_run["inputs"]] == [
        canonical(from_compaction(i)) for i in sqlite_run["inputs"]
    ]
    assert any(i.get("type") == "compaction" for i in foldwise_run["inputs"][-1])
    assert canonical(from_compaction(foldwise_items)) == canonical(from_compaction(sqlite_items))
    assert [i.get("type") for i in from_compaction(foldwise_items)] == [
        "compaction",
        "message",
        "message",
    ]


async def test_get_items_match_sqlite_session_after_every_turn(
    foldwise: AsyncFoldwise, openai_client: AsyncOpenAI, providers: CompactingProviders
) -> None:
    """As the SDK's tests check a session: get_items after each turn equal (modulo ids) to
    SQLiteSession's under the same compaction session, and so the model requests too."""
    sqlite = SQLiteSession(new_id("sqlite"))
    sqlite_session = compacting(sqlite, openai_client)
    foldwise_session = compacting(FoldwiseSession(new_id("fw"), client=foldwise), openai_client)
    agent = travel_agent(openai_client)
    sessions = {"sqlite": sqlite_session, "foldwise": foldwise_session}
    sent: dict[str, list[Any]] = {"sqlite": [], "foldwise": []}
    try:
        for text in TURNS:
            for name, session in sessions.items():
                first = len(providers.requests["responses"])
                await Runner.run(agent, as_message(text), session=session)
                sent[name] += [r["input"] for r in providers.requests["responses"][first:]]
            assert canonical(await got(foldwise_session)) == canonical(await got(sqlite_session))
    finally:
        sqlite.close()
    assert canonical(sent["foldwise"]) == canonical(sent["sqlite"])


async def test_kept_user_messages_are_served(foldwise: AsyncFoldwise) -> None:
    """The SDK's replacement as it makes it (clear_session, then add_items(compact output)),
    then a new turn: the compacted window is served whole, and explained as sent."""
    sid = new_id("kept")
    session = FoldwiseSession(sid, client=foldwise)
    await session.add_items(as_message("Plan a trip to Paris."))
    answer = {"type": "message", "role": "assistant", "content": "Gladly."}
    await session.add_items(cast(list[TResponseInputItem], [answer]))
    item = {"type": "compaction", "id": "cmp_kept", "encrypted_content": "gAAAAB-opaque"}
    compacted = [*as_message("Plan a trip to Paris."), cast(TResponseInputItem, item)]
    await session.clear_session()
    await session.add_items(compacted)
    await session.add_items(as_message("And the weather?"))

    assert await got(session) == [*compacted, *as_message("And the weather?")]
    context = await foldwise.context(sid, format="openai_responses", explain=True)
    assert context.explain is not None
    assert [entry["status"] for entry in context.explain] == ["included"] * 3
