"""Strategy resolution, the no-key fallback, and the hybrid summarizer against the fake API."""

from __future__ import annotations

from typing import Any

import pytest

from app.core.settings import Settings
from app.summarizers.base import SummaryRequest
from app.summarizers.factory import (
    NO_KEY,
    allowed_summarizer,
    build_summarizer,
    has_llm,
    open_summarizer,
    resolve_strategy,
    strategy_used,
    summarizer_choice,
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


def chosen(**values: Any) -> Settings:
    """Settings with no key but those given."""
    keys = {"anthropic_api_key": None, "openai_api_key": None, "gemini_api_key": None}
    return Settings(_env_file=None, **{**keys, **values})


class TestChoice:
    def test_a_choice_names_a_provider_and_a_model(self) -> None:
        settings = chosen(summarizer_provider="openai", summarizer_model="gpt-5")
        assert summarizer_choice(settings, None) == ("openai", "gpt-5")
        assert summarizer_choice(settings, "openai") == ("openai", "gpt-5")  # the configured
        assert summarizer_choice(settings, "gemini") == ("gemini", "gemini-2.5-flash")
        assert summarizer_choice(settings, "anthropic:claude-sonnet-4-6") == (
            "anthropic",
            "claude-sonnet-4-6",
        )

    @pytest.mark.parametrize(
        ("allowed", "choice", "reason"),
        [
            ("", "anthropic", None),  # the configured provider and model
            ("", "anthropic:claude-haiku-4-5", None),
            ("", "anthropic:claude-opus-4-1", "not allowed"),
            ("", "openai", "not allowed"),
            ("openai:*", "openai:gpt-5", None),
            ("openai:*", "openai", None),  # its default model
            ("openai:*", "gemini", "not allowed"),
            ("gemini:gemini-2.5-pro", "gemini:gemini-2.5-pro", None),
            ("gemini:gemini-2.5-pro", "gemini", "not allowed"),  # gemini-2.5-flash
            ("gemini", "gemini:gemini-2.5-flash", None),  # a provider alone: its default
            ("openai:*, gemini:*", "gemini:gemini-3-pro", None),
            ("openai:*", "openai:*", "names no model"),
            ("openai:*", "mistral:large", "unknown summarizer provider 'mistral'"),
        ],
    )
    def test_allowed_summarizer(self, allowed, choice, reason) -> None:
        settings = chosen(summarizer_models=allowed)
        found = allowed_summarizer(settings, choice)
        assert found is None if reason is None else reason in (found or "")

    def test_a_refusal_says_what_was_refused_and_where_to_allow_it(self) -> None:
        assert allowed_summarizer(chosen(), "openai:gpt-5") == (
            "summarizer openai:gpt-5 is not allowed (FOLDWISE_SUMMARIZER_MODELS)"
        )

    @pytest.mark.parametrize(
        ("provider", "values", "expected"),
        [
            ("anthropic", {"anthropic_api_key": "sk-ant"}, True),
            ("anthropic", {"openai_api_key": "sk"}, False),
            ("openai", {"openai_api_key": "sk"}, True),
            ("openai", {"openai_api_key": "  "}, False),
            ("openai", {"summarizer_base_url": "http://127.0.0.1:9/v1"}, True),  # no key needed
            ("gemini", {"gemini_api_key": "g"}, True),
            ("gemini", {"summarizer_base_url": "http://127.0.0.1:9/v1"}, False),
        ],
    )
    def test_each_provider_needs_its_own_key(self, provider, values, expected) -> None:
        assert has_llm(chosen(**values), provider) is expected
        assert has_llm(chosen(summarizer_provider=provider, **values)) is expected

    @pytest.mark.parametrize(
        ("provider", "reason"),
        [
            ("anthropic", "no ANTHROPIC_API_KEY configured"),
            ("openai", "no OPENAI_API_KEY configured"),
            ("gemini", "no GEMINI_API_KEY configured"),
        ],
    )
    async def test_the_no_key_reason_names_the_variable(self, counter, provider, reason) -> None:
        settings = chosen(summarizer_provider=provider, anthropic_api_key="sk-ant-elsewhere")
        request = SummaryRequest(messages(), None, 300)
        if provider != "anthropic":  # another provider's key does not count
            assert resolve_strategy("auto", settings) == "rule"
            auto = await build_summarizer("auto", settings=settings, counter=counter).summarize(
                request
            )
            assert (auto.method, auto.fallback) == ("rule", reason)
        llm = build_summarizer(
            "llm", settings=chosen(summarizer_provider=provider), counter=counter
        )
        result = await llm.summarize(request)
        assert (result.method, result.fallback) == ("fallback", reason)

    def test_auto_follows_the_chosen_provider(self) -> None:
        settings = chosen(gemini_api_key="g", summarizer_models="gemini:*")
        assert resolve_strategy("auto", settings) == "rule"  # anthropic has no key
        assert resolve_strategy("auto", settings, "gemini") == "llm"
        assert resolve_strategy("auto", settings, "openai") == "rule"

    async def test_a_choice_not_allowed_falls_back_without_a_call(
        self, fake_anthropic, counter
    ) -> None:
        settings = llm_settings(fake_anthropic.base_url)
        async with open_summarizer(
            "llm", settings=settings, counter=counter, cache=None, summarizer="openai:gpt-5"
        ) as summarizer:
            result = await summarizer.summarize(SummaryRequest(messages(), None, 300))
        assert (result.method, strategy_used(result)) == ("fallback", "rule")
        assert result.fallback == allowed_summarizer(settings, "openai:gpt-5")
        assert fake_anthropic.requests == []

    async def test_an_allowed_choice_folds_with_its_model(self, fake_anthropic, counter) -> None:
        settings = llm_settings(fake_anthropic.base_url, summarizer_models="anthropic:*")
        async with open_summarizer(
            "llm",
            settings=settings,
            counter=counter,
            cache=None,
            summarizer="anthropic:claude-sonnet-4-6",
        ) as summarizer:
            result = await summarizer.summarize(SummaryRequest(messages(), None, 300))
        assert (result.method, result.model) == ("llm", "claude-sonnet-4-6")
        (request,) = fake_anthropic.requests
        assert request.body["model"] == "claude-sonnet-4-6"

    def test_an_llm_strategy_needs_a_model(self, counter) -> None:
        with pytest.raises(ValueError, match="needs a summary model"):
            build_summarizer("llm", settings=llm_settings("http://127.0.0.1:9"), counter=counter)
