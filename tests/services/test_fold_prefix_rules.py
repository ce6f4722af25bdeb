"""When a fold may repeat the served context (app/services/fold_prefix.py): each reason it
may not, and where the span ends in the prefix it may."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any, cast

import pytest

from app.engine.assemble import AssemblyResult
from app.services.fold_prefix import with_prefix
from app.services.folds import FoldJob
from tests.summarizers.helpers import conversation

SPAN = conversation(("user", "Fix the sync test."), ("assistant", "Ran pytest: KeyError."))
SHAPE = {"version": 1, "anchor": None, "settings": "s", "limit": 900, "pruned": 0}


def job() -> FoldJob:
    return FoldJob(
        session_pk=1, session_id="s", version=1, previous_summary=None, previous_tokens=0,
        previous_message_count=0, messages=SPAN, through_id=SPAN[-1].id,
        through_seq=SPAN[-1].seq, trigger="ahead", strategy="llm", max_summary_tokens=300,
        tokens_before=2000, messages_before=4,
    )  # fmt: skip


def served(sources: tuple[str, ...], pruned: tuple[str, ...] = ()) -> AssemblyResult:
    messages = [{"role": "user", "content": source} for source in sources]
    return cast(
        AssemblyResult,
        SimpleNamespace(
            system="Be exact.", messages=messages, tools=None, sources=sources, pruned=pruned
        ),
    )


def record(chain: list[str], through_seq: int) -> dict[str, Any]:
    return {**SHAPE, "chain": chain, "through_seq": through_seq}


BEFORE = record(["a", "b", "c"], 3)
NOW = record(["a", "b", "c", "d"], 4)
SENT = ("0", "1", "2", "3")


def test_a_span_served_before_and_sent_whole_is_the_prefix() -> None:
    folded = with_prefix(
        job(), served(SENT), fmt="anthropic", model="m", previous=BEFORE, record=NOW
    )
    assert folded.prefix_note is None and folded.prefix is not None
    assert folded.prefix.keep_last == 2  # messages 2 and 3 follow the span's last, 1
    assert folded.prefix.span_end == "Ran pytest: KeyError."
    assert folded.prefix.model == "m" and folded.prefix.system == "Be exact."


@pytest.mark.parametrize(
    ("context", "previous", "fmt", "note"),
    [
        (served(SENT), BEFORE, "raw", "the context is served as raw, not a provider's format"),
        (served(SENT), None, "anthropic", "the span was not in the context served before"),
        (served(SENT), record(["x"], 3), "anthropic", "the span was not in the context served"),
        (served(SENT), record(["a"], 1), "anthropic", "the span was not in the context served"),
        (served(SENT, pruned=("1",)), BEFORE, "gemini", "part of the span was sent pruned"),
        (served(("1", "2", "3")), BEFORE, "openai", "part of the span was not sent"),
    ],
)
def test_otherwise_the_fold_is_fresh_and_says_why(
    context: AssemblyResult, previous: Any, fmt: str, note: str
) -> None:
    folded = with_prefix(job(), context, fmt=fmt, model="m", previous=previous, record=NOW)
    assert folded.prefix is None
    assert folded.prefix_note is not None and folded.prefix_note.startswith(note)
