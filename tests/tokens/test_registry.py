"""The model registry: packaged entries, id resolution, configured overrides."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from app.core.errors import UnknownModel
from app.core.settings import Settings
from app.tokens.registry import ModelInfo, ModelRegistry, ModelRegistryError, load_registry

CLAUDE = [
    "claude-sonnet-4-6",
    "claude-opus-4-6",
    "claude-opus-4-5",
    "claude-opus-4-1",
    "claude-opus-4",
    "claude-sonnet-4-5",
    "claude-sonnet-4",
    "claude-3-7-sonnet",
    "claude-haiku-4-5",
    "claude-3-5-haiku",
    "claude-3-5-sonnet",
]
O200K = [
    "gpt-5.2",
    "gpt-5.1",
    "gpt-5",
    "gpt-5-mini",
    "gpt-5-nano",
    "gpt-4.1",
    "gpt-4.1-mini",
    "gpt-4.1-nano",
    "gpt-4o",
    "gpt-4o-mini",
    "o3",
    "o3-mini",
    "o4-mini",
    "o1",
]
CL100K = ["gpt-4-turbo", "gpt-4", "gpt-3.5-turbo"]
GEMINI_3 = [
    "gemini-3.8-flash",
    "gemini-3.7-flash",
    "gemini-3.6-flash",
    "gemini-3.5-flash",
    "gemini-3.5-flash-lite",
    "gemini-3.1-pro-preview",
    "gemini-3.1-flash-lite",
    "gemini-3-flash-preview",
    "gemini-3-pro-preview",
]
GEMINI_2 = [
    "gemini-2.5-pro",
    "gemini-2.5-flash",
    "gemini-2.5-flash-lite",
    "gemini-2.0-flash",
    "gemini-2.0-flash-lite",
]


def _registry(models_file: str | None = None) -> ModelRegistry:
    return load_registry(Settings(models_file=models_file))


class TestPackaged:
    def test_claude_models_are_estimates_with_200k_windows(self) -> None:
        for name in CLAUDE:
            model = _registry().get(name)
            assert (model.provider, model.context_window, model.exact) == (
                "anthropic",
                200_000,
                False,
            )
            assert model.encoding == "cl100k_base"
            assert model.family == "anthropic"
            assert 0 < model.max_output_tokens < model.context_window

    def test_openai_models_are_exact_with_their_encoding(self) -> None:
        for names, encoding in ((O200K, "o200k_base"), (CL100K, "cl100k_base")):
            for name in names:
                model = _registry().get(name)
                assert (model.provider, model.encoding, model.exact) == ("openai", encoding, True)
                assert model.family == encoding

    def test_gemini_models_are_o200k_estimates_with_1m_windows(self) -> None:
        for names, media in ((GEMINI_3, "gemini-3"), (GEMINI_2, "gemini-2")):
            for name in names:
                model = _registry().get(name)
                assert (model.provider, model.encoding, model.exact, model.media) == (
                    "gemini",
                    "o200k_base",
                    False,
                    media,
                )
                assert model.context_window == 1_048_576
                assert model.family == "gemini"  # not "o200k_base": not OpenAI's calibration
        assert _registry().get("gemini-2.5-flash").max_output_tokens == 65_536
        assert _registry().get("gemini-2.0-flash").max_output_tokens == 8_192
        assert _registry().get("gemini-2.0-flash-lite").retires == "2026-06-01"

    def test_families_split_by_provider(self) -> None:
        families = {_registry().get(name).family for name in CLAUDE + O200K + CL100K + GEMINI_2}
        assert families == {"anthropic", "o200k_base", "cl100k_base", "gemini"}

    def test_all_lists_every_model_once(self) -> None:
        names = [model.name for model in _registry().all()]
        assert sorted(names) == sorted(set(CLAUDE + O200K + CL100K + GEMINI_3 + GEMINI_2))


class TestResolution:
    @pytest.mark.parametrize(
        ("model_id", "entry"),
        [
            ("claude-sonnet-4-5-20250929", "claude-sonnet-4-5"),
            ("claude-opus-4-1-20250805", "claude-opus-4-1"),
            ("claude-opus-4-20250514", "claude-opus-4"),
            ("claude-sonnet-4-5@20250929", "claude-sonnet-4-5"),
            ("gpt-4o-2024-08-06", "gpt-4o"),
            ("gpt-4o-mini-2024-07-18", "gpt-4o-mini"),
            ("gpt-4-0613", "gpt-4"),
            ("gpt-5-mini-2025-08-07", "gpt-5-mini"),
            ("claude-3-7-sonnet-latest", "claude-3-7-sonnet"),
        ],
    )
    def test_a_snapshot_counts_as_its_entry_under_its_own_name(
        self, model_id: str, entry: str
    ) -> None:
        model = _registry().get(model_id)
        assert model == dataclasses.replace(_registry().get(entry), name=model_id)
        assert model.warning is None

    @pytest.mark.parametrize(
        ("model_id", "family", "window"),
        [
            ("claude-sonnet-4-7", "claude", 200_000),
            ("claude-opus-5-5", "claude", 200_000),
            ("claude-mythos-preview", "claude", 200_000),
            ("gpt-4-32k", "gpt-4", 8192),
            ("gpt-5.5-pro", "gpt-5", 400_000),
            ("gpt-6.2-astra-law", "gpt-6", 400_000),
            ("o3-deep-research", "o-series", 200_000),
            ("gpt-daybreak-red-latest", "gpt-named", 128_000),
            ("gemini-9-ultra", "gemini", 1_048_576),
            ("gemini-3.9-pro-preview", "gemini", 1_048_576),
            ("gemini-flash-latest", "gemini", 1_048_576),
            ("gemini-2.0-flash-001", "gemini-2", 1_048_576),
        ],
    )
    def test_a_newer_model_of_a_known_family_gets_its_rules_and_a_warning(
        self, model_id: str, family: str, window: int
    ) -> None:
        model = _registry().get(model_id)
        assert (model.name, model.context_window) == (model_id, window)
        assert model.warning is not None and f"the {family} family" in model.warning

    def test_an_unknown_gemini_is_a_gemini_3_estimate(self) -> None:
        model = _registry().get("gemini-9-ultra")
        assert (model.provider, model.encoding, model.exact) == ("gemini", "o200k_base", False)
        assert (model.media, model.max_output_tokens) == ("gemini-3", 65_536)
        assert model.family == "gemini"
        assert _registry().get("gemini-2.5-flash-preview-09-2025").media == "gemini-2"

    @pytest.mark.parametrize(
        "model_id",
        [
            "gemini-1.5-pro",  # shut down long ago: a 2M window, not the family's
            "gemini-pro",
            "gemini-3-pro-image-preview",  # image, speech and live models have other limits
            "gemini-2.5-flash-preview-tts",
            "gemini-2.5-flash-native-audio-preview-12-2025",
            "gemini-3.8-live",
            "gemini-embedding-001",
        ],
    )
    def test_gemini_ids_of_other_limits_are_not_given_the_familys(self, model_id: str) -> None:
        with pytest.raises(UnknownModel) as caught:
            _registry().get(model_id)
        suggestions = caught.value.details["suggestions"]
        assert all(name.startswith("gemini-") for name in suggestions)

    @pytest.mark.parametrize(
        ("model_id", "suggested"),
        [
            ("gpt-40", "gpt-4o"),
            ("gpt-4o2", "gpt-4o"),
            ("gpt-4.5-preview", "gpt-4.1-mini"),
            ("claude-2", "claude-opus-4"),
            ("gemini-1.5-flash", "gemini-2.5-flash"),
            ("llama-3", None),
        ],
    )
    def test_unknown_ids_raise_422_suggesting_names_of_their_provider(
        self, model_id: str, suggested: str | None
    ) -> None:
        with pytest.raises(UnknownModel) as caught:
            _registry().get(model_id)
        assert caught.value.status_code == 422
        assert caught.value.code == "unknown_model"
        suggestions = caught.value.details["suggestions"]
        assert caught.value.details["model"] == model_id
        if suggested is not None:
            provider = _registry().get(suggested).provider
            assert all(_registry().get(name).provider == provider for name in suggestions)
            assert suggested in suggestions and suggested in caught.value.message

    @given(st.text(max_size=80))
    def test_any_id_resolves_to_itself_or_is_unknown(self, model_id: str) -> None:
        try:
            model = _registry().get(model_id)
        except UnknownModel as exc:
            assert exc.details["model"] == model_id
        else:
            assert model.name == model_id


class TestOverrides:
    def test_inline_list_adds_and_replaces_partially(self) -> None:
        inline = json.dumps(
            [
                {
                    "name": "local-llama",
                    "provider": "openai",
                    "context_window": 32_000,
                    "max_output_tokens": 4_000,
                    "encoding": "cl100k_base",
                    "exact": False,
                },
                {"name": "claude-sonnet-4-5", "context_window": 1_000_000},
            ]
        )
        registry = _registry(inline)
        assert registry.get("local-llama") == ModelInfo(
            "local-llama", "openai", 32_000, 4_000, "cl100k_base", False, media="openai-tiles-4o"
        )
        sonnet = registry.get("claude-sonnet-4-5-20250929")
        assert (sonnet.context_window, sonnet.max_output_tokens) == (1_000_000, 64_000)

    def test_file_path_and_exact_defaults_by_provider(self, tmp_path: Path) -> None:
        path = tmp_path / "models.json"
        path.write_text(
            json.dumps(
                [
                    {
                        "name": "my-claude",
                        "provider": "anthropic",
                        "context_window": 100,
                        "max_output_tokens": 10,
                        "encoding": "cl100k_base",
                    }
                ]
            )
        )
        assert _registry(str(path)).get("my-claude").exact is False

    def test_a_configured_gemini_is_an_estimate_with_gemini_3_media(self) -> None:
        inline = json.dumps(
            [
                {
                    "name": "gemini-4-pro",
                    "provider": "gemini",
                    "context_window": 2_097_152,
                    "max_output_tokens": 65_536,
                    "encoding": "o200k_base",
                }
            ]
        )
        model = _registry(inline).get("gemini-4-pro")
        assert (model.exact, model.media, model.family, model.warning) == (
            False,
            "gemini-3",
            "gemini",
            None,
        )

    def test_cached_per_models_file_value(self) -> None:
        assert _registry() is _registry()
        assert _registry('[{"name": "gpt-4", "context_window": 9000}]') is not _registry()

    @pytest.mark.parametrize(
        ("models_file", "reason"),
        [
            ("/nonexistent/models.json", "cannot read models_file"),
            ("[{", "not valid JSON"),
            ('{"name": "x"}', "must be a JSON list of model objects"),
            ("[1]", "must be a JSON list of model objects"),
            ('[{"provider": "openai"}]', "non-empty string 'name'"),
            ('[{"name": "gpt-4", "window": 1}]', "unknown fields"),
            ('[{"name": "new-model", "provider": "openai"}]', "encoding must be one of"),
            ('[{"name": "gpt-4", "provider": "mistral"}]', "provider must be one of"),
            ('[{"name": "gpt-4", "context_window": 0}]', "context_window must be a positive"),
            ('[{"name": "gpt-4", "max_output_tokens": 10000}]', "exceeds context_window"),
            ('[{"name": "gpt-4", "exact": "yes"}]', "exact must be true or false"),
            ('[{"name": "gpt-4", "retires": "soon"}]', "retires must be a date"),
        ],
    )
    def test_bad_configuration_fails_with_clear_error(self, models_file: str, reason: str) -> None:
        with pytest.raises(ModelRegistryError, match=reason):
            _registry(models_file)
