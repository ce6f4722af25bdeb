from __future__ import annotations

from app.engine.types import Message
from app.engine.units import group_units
from tests.engine.strategies import FakeCounter, make_message, openai_call

COUNTER = FakeCounter()


def _use(call_id: str) -> dict[str, object]:
    return {"type": "tool_use", "id": call_id, "name": "read_file", "input": {"path": "x.py"}}


def _result(call_id: str, text: str = "ok") -> dict[str, object]:
    return {"type": "tool_result", "tool_use_id": call_id, "content": text}


class TestGroupUnits:
    def test_plain_messages_are_one_unit_each(self) -> None:
        messages = [make_message(1, "user", "hi"), make_message(2, "assistant", "hello")]
        grouping = group_units(messages, COUNTER)
        assert [[m.id for m in u.messages] for u in grouping.units] == [["m1"], ["m2"]]

    def test_parallel_tool_calls_move_together(self) -> None:
        calls = [
            openai_call("a", "run", {}),
            openai_call("b", "run", {}),
            openai_call("c", "run", {}),
        ]
        messages = [
            make_message(1, "user", "go"),
            make_message(2, "assistant", "", tool_calls=calls),
            make_message(3, "tool", "A", tool_call_id="a"),
            make_message(4, "tool", "B", tool_call_id="b"),
            make_message(5, "tool", "C", tool_call_id="c"),
            make_message(6, "assistant", "done"),
        ]
        grouping = group_units(messages, COUNTER)
        assert [[m.seq for m in u.messages] for u in grouping.units] == [[1], [2, 3, 4, 5], [6]]
        assert not any(u.pending for u in grouping.units)

    def test_non_adjacent_results_pull_the_messages_between_into_the_unit(self) -> None:
        messages = [
            make_message(
                1, "assistant", [{"type": "text", "text": "reading"}, _use("t1"), _use("t2")]
            ),
            make_message(2, "user", "meanwhile: also check y.py"),
            make_message(
                3, "user", [_result("t2"), _result("t1"), {"type": "text", "text": "here"}]
            ),
            make_message(4, "assistant", "ok"),
        ]
        grouping = group_units(messages, COUNTER)
        assert [[m.seq for m in u.messages] for u in grouping.units] == [[1, 2, 3], [4]]

    def test_newest_unanswered_call_is_pending(self) -> None:
        messages = [make_message(1, "user", "go"), make_message(2, "assistant", [_use("t1")])]
        grouping = group_units(messages, COUNTER)
        assert grouping.units[-1].pending
        assert grouping.units[-1].messages[0].call_ids == ("t1",)

    def test_older_unanswered_call_is_removed_but_its_text_kept(self) -> None:
        messages = [
            make_message(1, "assistant", [{"type": "text", "text": "let me look"}, _use("t1")]),
            make_message(2, "user", "never mind"),
        ]
        grouping = group_units(messages, COUNTER)
        first = grouping.units[0].messages[0]
        assert first.call_ids == () and first.content == [{"type": "text", "text": "let me look"}]
        assert first.tokens < messages[0].tokens
        assert grouping.repaired == {"m1"}
        assert messages[0].call_ids == ("t1",)  # the input is untouched

    def test_orphan_results_are_removed_and_reported(self) -> None:
        messages = [
            make_message(1, "tool", "stale", tool_call_id="folded_long_ago"),
            make_message(2, "user", [_result("gone"), {"type": "text", "text": "and now?"}]),
            make_message(3, "user", [_result("gone2")]),
        ]
        grouping = group_units(messages, COUNTER)
        assert set(grouping.dropped) == {"m1", "m3"}
        assert grouping.repaired == {"m2"}
        assert grouping.units[0].messages[0].content == [{"type": "text", "text": "and now?"}]

    def test_result_before_its_call_is_an_orphan(self) -> None:
        messages = [
            make_message(1, "user", [_result("t1")]),
            make_message(2, "assistant", [_use("t1")]),
        ]
        grouping = group_units(messages, COUNTER)
        assert "m1" in grouping.dropped and grouping.units[-1].pending

    def test_empty_messages_are_dropped(self) -> None:
        messages = [
            make_message(1, "user", "  "),
            make_message(2, "assistant", [{"type": "text", "text": ""}]),
        ]
        assert group_units(messages, COUNTER).dropped == {
            "m1": "empty message",
            "m2": "empty message",
        }


def test_a_counted_copy_keeps_every_other_field() -> None:
    """`Message.counted` copies field by field (it skips `__post_init__`): a field added to
    `Message` and not copied there fails here."""
    original = Message(
        id="7",
        seq=8,
        role="assistant",
        content=[{"type": "tool_use", "id": "t1", "name": "grep", "input": {}}],
        tokens=40,
        name="bot",
        tool_calls=[{"id": "c1", "type": "function", "function": {"name": "f"}}],
        metadata={"k": 1},
        overhead=3,
    )
    copy = original.counted(12, 5)
    assert (copy.tokens, copy.overhead) == (12, 5)
    for name in Message.__slots__:
        if name not in ("tokens", "overhead"):
            assert getattr(copy, name) == getattr(original, name), name
    assert copy.call_ids == ("c1", "t1")
