"""Strategy resolution, the no-key fallback, and the hybrid summarizer against the fake API."""

from __future__ import annotations

from typing import Any

import pytest

from app.core.settings import Settings
from app.summarizers.base import SummaryRequest
from app.summarizers.factory import (
    NO_KEY,
    build_summarizer,
    open_summarizer,
    resolve_strategy,
    strategy_used,
)
from app.summarizers.hybrid import NARRATIVE_HEADER, split_hybrid
from tests.summarizers.helpers import conversation, llm_settings

NO_KEY_SETTINGS = Settings(_env_file=None, anthropic_api_key=None)


def messages() -> list[Any]:
    return conversation(
        ("user", "Fix the build. Never bump dependencies."),
        (
            "assistant",
            [{"type": "tool_use", "id": "1", "name": "bash", "input": {"command": "make"}}],
        ),
        (
            "user",
            [
                {
                    "type": "tool_result",
                    "tool_use_id": "1",
                    "content": "error: missing header\nexit code: 2",
                }
            ],
        ),
    )


class TestResolution:
    def test_auto_depends_on_the_key(self) -> None:
        assert resolve_strategy("auto", NO_KEY_SETTINGS) == "rule"
        assert resolve_strategy("auto", llm_settings("http://127.0.0.1:9")) == "llm"
        assert resolve_strategy(None, NO_KEY_SETTINGS) == "rule"

    def test_unknown_strategy(self) -> None:
        with pytest.raises(ValueError, match="unknown strategy"):
            resolve_strategy("magic", NO_KEY_SETTINGS)

    @pytest.mark.parametrize(
        ("strategy", "method", "fallback"),
        [
            ("auto", "rule", NO_KEY),
            ("rule", "rule", None),
            ("llm", "fallback", NO_KEY),
            ("hybrid", "fallback", NO_KEY),
        ],
    )
    async def test_without_key(self, counter, strategy, method, fallback) -> None:
        summarizer = build_summarizer(strategy, settings=NO_KEY_SETTINGS, counter=counter)
        result = await summarizer.summarize(SummaryRequest(messages(), None, 300))
        assert (result.method, result.fallback, strategy_used(result)) == (method, fallback, "rule")
        assert "`error: missing header` (from `make`)" in result.text


class TestHybrid:
    async def test_rule_facts_plus_llm_narrative(self, fake_anthropic, counter) -> None:
        fake_anthropic.reply = lambda request: (
            "The build fails on a missing header; next: vendor it."
        )
        settings = llm_settings(fake_anthropic.base_url)
        async with open_summarizer(
            "hybrid", settings=settings, counter=counter, cache=None
        ) as summarizer:
            result = await summarizer.summarize(SummaryRequest(messages(), None, 300))
        assert result.method == "hybrid"
        facts, narrative = split_hybrid(result.text)
        assert facts is not None and "- `make` → exit 2" in facts
        assert narrative == "The build fails on a missing header; next: vendor it."
        assert result.tokens <= 300

    async def test_next_fold_sends_only_the_narrative_as_previous(
        self, fake_anthropic, counter
    ) -> None:
        previous = f"Commands:\n- `make` → exit 2\n{NARRATIVE_HEADER}\nEarlier story."
        settings = llm_settings(fake_anthropic.base_url)
        async with open_summarizer(
            "hybrid", settings=settings, counter=counter, cache=None
        ) as summarizer:
            result = await summarizer.summarize(
                SummaryRequest(conversation(("user", "Go on.")), previous, 300)
            )
        (request,) = fake_anthropic.requests
        assert "<previous_summary>\nEarlier story.\n</previous_summary>" in request.prompt
        assert "- `make` → exit 2" in result.text

    async def test_llm_failure_falls_back_to_full_rule_summary(
        self, fake_anthropic, counter
    ) -> None:
        fake_anthropic.default = "500"
        settings = llm_settings(fake_anthropic.base_url)
        async with open_summarizer(
            "hybrid", settings=settings, counter=counter, cache=None
        ) as summarizer:
            result = await summarizer.summarize(SummaryRequest(messages(), None, 300))
        assert (result.method, result.fallback) == ("fallback", "anthropic 500 api_error")
        assert "- Never bump dependencies." in result.text
