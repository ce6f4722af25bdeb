"""Old media as a cheap tier (app/engine/media.py, app/engine/prune.py), over random histories
of screenshots, PDFs and text at random budgets, counted by the real counter:

- a media block is sent as a placeholder only when at least `keep_media` media blocks follow
  it in the history (or its message had to be truncated to fit), and the placeholder names
  the stored message that holds it;
- the stored messages are never altered; the context stays within its budget;
- between folds, more turns never undo or redo a cut: what a context cut, a later one cuts
  the same way (the prompt cache breaks only where a new prune must);
- `usage.media_tokens` is what the media sent cost by the model's rule.
"""

from __future__ import annotations

import copy
import json
import re
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from app.core.context_settings import ContextSettings
from app.core.settings import Settings
from app.engine.assemble import AssemblyInput, AssemblyResult, assemble
from app.engine.types import Message
from app.tokens.counter import TiktokenCounter, counter_for
from app.tokens.registry import load_registry
from tests.support.media import anthropic_image, anthropic_pdf, b64, image_bytes, pdf_bytes

COUNTER: TiktokenCounter = counter_for(
    load_registry(Settings(_env_file=None)).get("claude-sonnet-4-6")
)
SHOTS = [b64(image_bytes(w, h)) for w, h in [(1280, 800), (1920, 1080), (800, 600), (640, 480)]]
PDF = b64(pdf_bytes(["Quarterly report. " * 40, "Appendix. " * 40]))
PLACEHOLDER = re.compile(r"left out to save context; stored in message #(\d+)\]")


def media_block(kind: int) -> dict[str, Any]:
    return anthropic_pdf(PDF) if kind == len(SHOTS) else anthropic_image(SHOTS[kind])


@st.composite
def histories(draw: st.DrawFn) -> list[Message]:
    """A task, then steps: a tool call and its result, which may hold media; or chat."""
    raw: list[tuple[str, Any]] = [("user", "Book the cheapest flight to Lisbon in March.")]
    for step in range(draw(st.integers(1, 30))):
        if draw(st.booleans()):
            call = {"type": "tool_use", "id": f"t{step}", "name": "computer", "input": {"n": step}}
            media = draw(st.lists(st.integers(0, len(SHOTS)), max_size=2))
            inner = [media_block(k) for k in media] or [{"type": "text", "text": "ok"}]
            result = {"type": "tool_result", "tool_use_id": f"t{step}", "content": inner}
            raw += [("assistant", [call]), ("user", [result])]
        else:
            text = f"Step {step}: " + "detail " * draw(st.integers(1, 80))
            blocks: list[dict[str, Any]] = [{"type": "text", "text": text}]
            if draw(st.booleans()):
                blocks.append(media_block(draw(st.integers(0, len(SHOTS)))))
            raw += [("user", blocks), ("assistant", f"Done with step {step}.")]
    return [
        Message(
            id=f"m{i + 1}",
            seq=i + 1,
            role=role,  # type: ignore[arg-type]
            content=content,
            tokens=COUNTER.count_message(Message(f"m{i + 1}", i + 1, role, content, 0)),  # type: ignore[arg-type]
        )
        for i, (role, content) in enumerate(raw)
    ]


def media_seqs(messages: list[Message]) -> list[int]:
    """The seq of each media block, in history order."""
    text = [json.dumps(m.content) for m in messages]
    return [
        m.seq
        for m, t in zip(messages, text, strict=True)
        for _ in re.finditer(r'"type": "(image|document)"', t)
    ]


def request(messages: list[Message], max_tokens: int, keep_media: int) -> AssemblyInput:
    return AssemblyInput(
        messages=messages,
        context_window=200_000,
        settings=ContextSettings(keep_media=keep_media, keep_recent=4, cache_breakpoints=False),
        max_tokens=max_tokens,
        mode="never",  # no fold: the tiers before it are what is tested
    )


@settings(max_examples=40, deadline=None)
@given(history=histories(), max_tokens=st.integers(3_000, 40_000), keep_media=st.integers(0, 4))
def test_only_old_media_is_left_out(
    history: list[Message], max_tokens: int, keep_media: int
) -> None:
    stored = copy.deepcopy([m.content for m in history])
    result = assemble(request(history, max_tokens, keep_media), COUNTER)
    assert [m.content for m in history] == stored  # never altered
    assert result.usage.total_tokens <= result.usage.budget
    seqs = media_seqs(history)
    sent = sent_by_id(result)
    truncated = {e.id for e in result.explain if e.status == "truncated"}
    for message_id, message in sent.items():
        for match in PLACEHOLDER.finditer(json.dumps(message)):
            seq = int(match.group(1))
            assert f"m{seq}" == message_id and seq in seqs  # names its own stored message
            if message_id not in truncated:  # a message cut to fit loses its media first
                assert sum(1 for s in seqs if s > seq) >= keep_media, (seq, seqs, keep_media)


def sent_by_id(result: AssemblyResult) -> dict[str, dict[str, Any]]:
    """Each output message by the stored message it renders (one stored message, one output
    message; a message Foldwise adds, such as a leading continuation turn, is left out)."""
    return {
        source: message
        for source, message in zip(result.sources, result.messages, strict=True)
        if source.startswith("m")
    }


@settings(max_examples=25, deadline=None)
@given(history=histories(), more=st.integers(1, 6), max_tokens=st.integers(8_000, 40_000))
def test_more_turns_never_undo_or_redo_a_cut(
    history: list[Message], more: int, max_tokens: int
) -> None:
    """The prune replay decides from the prefix alone: with more turns, what was cut (text
    excerpted, media left out) is cut the same way, byte for byte, and more may be cut; a
    message sent whole before is sent whole or cut, never cut differently."""
    if len(history) <= more + 1:
        return
    before = assemble(request(history[: len(history) - more], max_tokens, 3), COUNTER)
    after = assemble(request(history, max_tokens, 3), COUNTER)
    assert set(before.pruned) <= set(after.pruned) | set(after.dropped)
    sent_before, sent_after = sent_by_id(before), sent_by_id(after)
    for message_id in before.pruned:
        if message_id in sent_after:
            assert sent_after[message_id] == sent_before[message_id]


def test_media_tokens_are_what_the_media_sent_cost() -> None:
    shot = anthropic_image(SHOTS[0])  # 1280 × 800: 1,366 tokens on Claude
    history = [
        Message("m1", 1, "user", [{"type": "text", "text": "look"}, shot], 0),
        Message("m2", 2, "assistant", "I see a login form.", 0),
    ]
    counted = [m.counted(COUNTER.count_message(m)) for m in history]
    result = assemble(request(counted, 40_000, 3), COUNTER)
    assert result.usage.media_tokens == 1366
