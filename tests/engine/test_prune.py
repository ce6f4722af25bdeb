from __future__ import annotations

import copy
import json
import math

from app.core.context_settings import ContextSettings
from app.engine.assemble import AssemblyInput, AssemblyResult, Mode, assemble
from app.engine.prune import (
    PRUNE_HEAD_CHARS,
    PRUNE_MIN_CHARS,
    PRUNE_TAIL_CHARS,
    excerpt,
    prune_message,
)
from tests.engine.strategies import FakeCounter, make_message, openai_call

COUNTER = FakeCounter()
BODY = "".join(f"line {i}\n" for i in range(3000))  # ≈ 24,000 characters


class TestPruneMessage:
    def test_excerpt_keeps_head_and_tail_and_says_how_much_was_cut(self) -> None:
        cut = excerpt(BODY)
        assert cut.startswith(BODY[:PRUNE_HEAD_CHARS]) and cut.endswith(BODY[-PRUNE_TAIL_CHARS:])
        assert f"…[pruned {len(BODY) - PRUNE_HEAD_CHARS - PRUNE_TAIL_CHARS:,} chars]…" in cut

    def test_long_tool_result_is_cut_and_recounted(self) -> None:
        message = make_message(
            2, "user", [{"type": "tool_result", "tool_use_id": "t1", "content": BODY}]
        )
        before = copy.deepcopy(message)
        pruned = prune_message(message, COUNTER)
        assert pruned is not None and message == before
        block = pruned.content[0]
        assert (
            isinstance(block, dict)
            and block["tool_use_id"] == "t1"
            and "[pruned" in block["content"]
        )
        assert pruned.tokens == 4 + COUNTER.count_content(pruned.content)

    def test_file_body_in_a_write_file_call_is_cut_but_path_kept(self) -> None:
        use = {
            "type": "tool_use",
            "id": "t1",
            "name": "write_file",
            "input": {"path": "app/x.py", "content": BODY},
        }
        pruned = prune_message(make_message(2, "assistant", [use]), COUNTER)
        assert pruned is not None and isinstance(pruned.content, list)
        assert pruned.content[0]["input"]["path"] == "app/x.py"
        assert "[pruned" in pruned.content[0]["input"]["content"]

    def test_openai_call_arguments_stay_valid_json(self) -> None:
        call = openai_call("c1", "create_file", {"path": "a.md", "content": BODY})
        pruned = prune_message(make_message(2, "assistant", "", tool_calls=[call]), COUNTER)
        assert pruned is not None and pruned.tool_calls is not None
        arguments = json.loads(pruned.tool_calls[0]["function"]["arguments"])
        assert arguments["path"] == "a.md" and "[pruned" in arguments["content"]

    def test_short_content_is_left_alone(self) -> None:
        assert prune_message(make_message(1, "user", "x" * PRUNE_MIN_CHARS), COUNTER) is None


class TestPruneTier:
    def _history(self) -> list:  # type: ignore[type-arg]
        return [
            make_message(1, "user", "Fix the failing test"),
            make_message(2, "assistant", "Reading the log."),
            make_message(3, "user", BODY),
            make_message(4, "assistant", "Found it."),
            make_message(5, "user", BODY),
            make_message(6, "assistant", "Patched."),
        ]

    def test_prunes_old_bulk_and_keeps_recent_and_pinned_untouched(self) -> None:
        history = self._history()
        settings = ContextSettings(keep_recent=2, prune_target=1.0)  # prune just enough
        request = AssemblyInput(
            messages=tuple(history), context_window=0, max_tokens=9000, settings=settings
        )
        result = assemble(request, COUNTER)
        status = {e.id: e.status for e in result.explain}
        assert status == {
            "m1": "included",
            "m2": "included",
            "m3": "pruned",
            "m4": "included",
            "m5": "included",
            "m6": "included",
        }
        assert result.fold_plan is None  # pruning was enough: no summarizer call
        assert result.pruned == ("m3",)
        assert result.usage.total_tokens <= 9000

    def test_pinned_first_message_is_never_pruned(self) -> None:
        history = [make_message(1, "user", BODY), *self._history()[1:]]
        request = AssemblyInput(
            messages=tuple(history),
            context_window=0,
            max_tokens=9000,
            settings=ContextSettings(keep_recent=0),
        )
        result = assemble(request, COUNTER)
        status = {e.id: e.status for e in result.explain}
        assert status["m1"] == "included" and result.messages[0]["content"] == BODY

    def test_pruning_has_hysteresis_so_following_turns_only_append(self) -> None:
        history = [make_message(1, "user", "The task")]
        for step in range(30):
            history.append(make_message(len(history) + 1, "assistant", f"Reading {step}."))
            history.append(make_message(len(history) + 1, "user", BODY[:4000]))
        settings = ContextSettings(keep_recent=2, prune_at_least=0)
        events, previous = 0, set[str]()
        for end in range(3, len(history) + 1, 2):
            request = AssemblyInput(
                messages=tuple(history[:end]),
                context_window=0,
                max_tokens=12_000,  # pruning alone always fits: nothing is dropped
                settings=settings,
                mode="never",
            )
            result = assemble(request, COUNTER)
            pruned = set(result.pruned)
            assert previous <= pruned and not result.dropped
            events, previous = events + (pruned != previous), pruned
        assert previous and events <= 4  # "just enough" pruning changed it on most turns

    def test_a_prune_that_leaves_too_little_runway_folds_instead(self) -> None:
        # ≈ 1,000-token tool results under a 12k budget: pruning to prune_target (0.6) would
        # leave room for a few results only, then break the cache again; a fold goes deeper.
        history = [make_message(1, "user", "The task")]
        for step in range(30):
            history.append(make_message(len(history) + 1, "assistant", f"Reading {step}."))
            history.append(make_message(len(history) + 1, "user", BODY[:4000]))
        settings = ContextSettings(keep_recent=2)
        request = AssemblyInput(
            messages=tuple(history), context_window=0, max_tokens=12_000, settings=settings
        )
        result = assemble(request, COUNTER)
        assert result.fold_plan is not None
        assert result.fold_plan.target_tokens < math.floor(0.6 * 12_000)
        roomy = AssemblyInput(
            messages=tuple(history), context_window=0, max_tokens=24_000, settings=settings
        )
        assert assemble(roomy, COUNTER).fold_plan is None  # pruning alone leaves the runway

    def test_never_prunes_to_prune_target_as_before(self) -> None:
        # With `summarize=never` (the stateless route) there is no fold to leave a runway
        # for: pruning stops at prune_target, it does not excerpt more than that.
        history = [make_message(1, "user", "The task")]
        for step in range(16):
            history.append(make_message(len(history) + 1, "assistant", f"Reading {step}."))
            history.append(make_message(len(history) + 1, "user", BODY[:4000]))
        settings = ContextSettings(keep_recent=2)

        def run(mode: Mode) -> AssemblyResult:
            request = AssemblyInput(
                messages=tuple(history),
                context_window=0,
                max_tokens=12_000,
                settings=settings,
                mode=mode,
            )
            return assemble(request, COUNTER)

        never, auto = run("never"), run("auto")
        assert not never.dropped and never.fold_plan is None
        assert never.usage.estimated_tokens > math.floor(0.6 * 12_000) - 1024
        assert len(never.pruned) < len(auto.pruned) and auto.fold_plan is not None
