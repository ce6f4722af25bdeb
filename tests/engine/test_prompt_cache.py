"""Properties of issue 8: one-to-one output, pinned verbatim, thinking intact or absent,
breakpoints within the provider's limit, and prefix stability for append-only sessions."""

from __future__ import annotations

import dataclasses
from typing import Any, get_args

from hypothesis import given
from hypothesis import strategies as st

from app.core.context_settings import ContextSettings
from app.engine.assemble import SENT, AssemblyInput, assemble
from app.engine.prompt_cache import CHAIN_HEAD, MAX_BREAKPOINTS, chain_elements, unmarked
from app.engine.render import SYNTHETIC, Format
from app.engine.types import Message
from tests.engine.strategies import FakeCounter, assembly_requests, make_message, texts
from tests.support.assembly import assemble_or_too_small
from tests.support.hypothesis_settings import PROPERTY
from tests.support.markers import count_markers

THINKING = frozenset({"thinking", "redacted_thinking"})


def _blocks(message: dict[str, Any]) -> list[dict[str, Any]]:
    content = message.get("content")
    return [b for b in content if isinstance(b, dict)] if isinstance(content, list) else []


@PROPERTY
@given(assembly_requests())
def test_every_output_message_is_one_sent_message_or_flagged(
    case: tuple[AssemblyInput, Any],
) -> None:
    request, counter = case
    result = assemble_or_too_small(request, counter)
    if result is None:
        return
    markers = count_markers(result.messages) + count_markers(result.system or "")
    assert markers + count_markers(result.tools or []) <= MAX_BREAKPOINTS
    if request.format == "openai":  # thinking never becomes text; no breakpoints
        assert "thinking" not in str(result.messages) and result.breakpoints == 0
    assert result.messages_included == len(result.messages) == len(result.sources)
    sent = {e.id for e in result.explain if e.status in SENT}
    synthetic = [e.id for e in result.explain if e.status == "synthetic"]
    assert set(result.sources) == sent | set(synthetic)
    assert [s for s in result.sources if s in SYNTHETIC] == synthetic
    by_id = {m.id: m for m in request.messages}
    for source, message in zip(result.sources, result.messages, strict=True):
        stored = by_id.get(source)
        if stored is None or request.format != "anthropic":
            continue
        status = next(e.status for e in result.explain if e.id == source)
        plain = stored.role in ("user", "assistant") and not stored.result_ids
        if status == "included" and plain and not stored.call_ids:
            assert _as_stored(message["content"], stored) == stored.content  # verbatim
        blocks = stored.content if isinstance(stored.content, list) else []
        stored_thinking = [b for b in blocks if b["type"] in THINKING]
        sent_thinking = [b for b in _blocks(message) if b.get("type") in THINKING]
        assert sent_thinking == stored_thinking  # byte-for-byte, never pruned or cut


def _as_stored(content: Any, stored: Message) -> Any:
    """Sent content without breakpoints (a marked string is sent as one text block)."""
    plain = unmarked(content)
    if isinstance(stored.content, str) and isinstance(plain, list) and len(plain) == 1:
        return plain[0].get("text")
    return plain


@st.composite
def agent_sessions(draw: Any) -> list[Message]:
    """Well-formed, append-only: every tool call is answered by the next message."""
    raw: list[tuple[str, Any]] = [("user", "The task: make the tests pass")]
    for step in range(draw(st.integers(min_value=4, max_value=40))):
        kind = draw(st.sampled_from(["tool", "tool", "tool", "chat", "think"]))
        call = {"type": "tool_use", "id": f"t{step}", "name": "read", "input": {"p": step}}
        if kind == "chat":
            raw += [("assistant", draw(texts) or "ok"), ("user", draw(texts) or "go on")]
        else:
            thought = [{"type": "thinking", "thinking": "plan", "signature": "c2ln"}]
            head = thought if kind == "think" else [{"type": "text", "text": "Reading."}]
            raw.append(("assistant", [*head, call]))
            result = {"type": "tool_result", "tool_use_id": f"t{step}", "content": draw(texts)}
            raw.append(("user", [result]))
    return [make_message(seq, role, content) for seq, (role, content) in enumerate(raw, 1)]


@PROPERTY
@given(
    agent_sessions(),
    st.sampled_from([1_500, 4_000, 20_000]),
    st.sampled_from(["anthropic", "openai"]),
)
def test_between_folds_and_prunes_each_context_is_the_previous_one_plus_new_messages(
    history: list[Message], budget: int, fmt: str
) -> None:
    counter = FakeCounter()
    settings = ContextSettings(keep_recent=4, cache_breakpoints=True)
    previous = None
    for end in range(1, len(history) + 1):
        if history[end - 1].role == "assistant":
            continue  # a client asks for a context before each generation
        request = AssemblyInput(
            messages=tuple(history[:end]),
            context_window=0,
            max_tokens=budget,
            settings=settings,
            format=fmt,  # type: ignore[arg-type]
            mode="never",
        )
        result = assemble(request, counter)
        fitted = any(e.status in ("dropped", "truncated") for e in result.explain)
        if previous is not None and not fitted:
            old_chain, old_pruned = previous
            assert set(old_pruned) <= set(result.pruned)  # the pruned set only grows
            if set(result.pruned) == set(old_pruned):  # no prune event: only appended
                assert result.prefix_chain[: len(old_chain)] == old_chain
        previous = None if fitted else (result.prefix_chain, result.pruned)


@PROPERTY
@given(assembly_requests(), st.sampled_from(get_args(Format)))
def test_a_chain_never_outgrows_what_its_messages_can_render_to(
    case: tuple[AssemblyInput, Any], fmt: Format
) -> None:
    """The import bounds a served record's chain by `chain_elements` of the exported
    messages (app/services/transfer.py): no context the service serves is longer."""
    request, counter = case
    result = assemble_or_too_small(dataclasses.replace(request, format=fmt), counter)
    if result is None:
        return
    room = CHAIN_HEAD + sum(chain_elements(m.content, m.tool_calls) for m in request.messages)
    assert len(result.prefix_chain) <= room
