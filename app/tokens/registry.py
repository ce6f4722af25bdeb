"""The model registry: context windows, output limits and the encoding used to count.

Entries come from the packaged `app/data/models.json`, then `settings.models_file` (a path
to a JSON file, or an inline JSON list) adds entries or replaces them by name. A replacing
entry may give only the fields it changes. Lookups accept dated or suffixed ids: the
longest registered name that prefixes the id at a separator (`-`, `@`, `:`) wins, so
`claude-sonnet-4-5-20250929` resolves to `claude-sonnet-4-5`, `gpt-4o-mini-2024-07-18`
to `gpt-4o-mini`, but `gpt-4.5` does not fall back to `gpt-4`.
"""

from __future__ import annotations

import functools
import json
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any, Literal, cast

from app.core.errors import UnknownModel
from app.core.settings import Settings
from app.tokens.encodings import ENCODING_NAMES

Provider = Literal["anthropic", "openai"]
PROVIDERS: tuple[str, ...] = ("anthropic", "openai")
_FIELDS = ("name", "provider", "context_window", "max_output_tokens", "encoding", "exact")
# Characters that may follow a registered name in a longer model id (dates, versions, tags).
_ID_SEPARATORS = ("-", "@", ":")
# How many known names an UnknownModel message lists.
_NAMES_IN_ERROR = 8


class ModelRegistryError(RuntimeError):
    """The packaged or configured model list is malformed (raised at startup)."""


@dataclass(frozen=True)
class ModelInfo:
    name: str
    provider: Provider
    context_window: int
    max_output_tokens: int
    encoding: str
    exact: bool
    """True only where `encoding` is the model's own tokenizer (OpenAI); Claude is estimated."""

    @property
    def family(self) -> str:
        """Calibration key: "anthropic" for Claude models, the encoding name for OpenAI."""
        return "anthropic" if self.provider == "anthropic" else self.encoding


class ModelRegistry:
    def __init__(self, models: list[ModelInfo]) -> None:
        self._by_name = {model.name: model for model in models}
        # Longest names first, so the first prefix that matches is the longest one.
        self._by_length = sorted(self._by_name, key=len, reverse=True)

    def get(self, name: str) -> ModelInfo:
        """The model named `name`, or the longest registered prefix of it; else UnknownModel."""
        model = self._by_name.get(name)
        if model is not None:
            return model
        for known in self._by_length:
            if name.startswith(known) and name[len(known)] in _ID_SEPARATORS:
                return self._by_name[known]
        examples = ", ".join(sorted(self._by_name)[:_NAMES_IN_ERROR])
        raise UnknownModel(
            f"unknown model {name!r}; known models include {examples} (see GET /models)",
            {"model": name, "known": sorted(self._by_name)},
        )

    def all(self) -> list[ModelInfo]:
        return sorted(self._by_name.values(), key=lambda model: (model.provider, model.name))


def load_registry(settings: Settings) -> ModelRegistry:
    """The packaged registry plus `settings.models_file` overrides, built once per value."""
    return _load_registry(settings.models_file)


@functools.cache
def _load_registry(models_file: str | None) -> ModelRegistry:
    packaged = resources.files("app") / "data" / "models.json"
    entries = {e["name"]: e for e in _entry_list(packaged.read_text("utf-8"), "models.json")}
    if models_file:
        source, text = _override_text(models_file)
        for entry in _entry_list(text, source):
            entries[entry["name"]] = {**entries.get(entry["name"], {}), **entry}
    return ModelRegistry([_model_info(entry) for entry in entries.values()])


def _override_text(models_file: str) -> tuple[str, str]:
    if models_file.lstrip().startswith(("[", "{")):  # JSON, not a path
        return "inline models_file JSON", models_file
    try:
        return models_file, Path(models_file).read_text("utf-8")
    except OSError as exc:
        raise ModelRegistryError(f"cannot read models_file {models_file!r}: {exc}") from exc


def _entry_list(text: str, source: str) -> list[dict[str, Any]]:
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ModelRegistryError(f"{source} is not valid JSON: {exc}") from exc
    if not isinstance(data, list) or not all(isinstance(e, dict) for e in data):
        raise ModelRegistryError(f"{source} must be a JSON list of model objects")
    for index, entry in enumerate(data):
        if not isinstance(entry.get("name"), str) or not entry["name"]:
            raise ModelRegistryError(f"{source}: entry {index} needs a non-empty string 'name'")
        unknown = set(entry) - set(_FIELDS)
        if unknown:
            raise ModelRegistryError(
                f"{source}: model {entry['name']!r} has unknown fields {sorted(unknown)}; "
                f"allowed: {', '.join(_FIELDS)}"
            )
    return cast(list[dict[str, Any]], data)


def _model_info(entry: dict[str, Any]) -> ModelInfo:
    name = entry["name"]
    provider = entry.get("provider")
    if provider not in PROVIDERS:
        raise ModelRegistryError(f"model {name!r}: provider must be one of {PROVIDERS}")
    if entry.get("encoding") not in ENCODING_NAMES:
        raise ModelRegistryError(f"model {name!r}: encoding must be one of {ENCODING_NAMES}")
    for key in ("context_window", "max_output_tokens"):
        value = entry.get(key)
        if not isinstance(value, int) or isinstance(value, bool) or value <= 0:
            raise ModelRegistryError(f"model {name!r}: {key} must be a positive integer")
    if entry["max_output_tokens"] > entry["context_window"]:
        raise ModelRegistryError(f"model {name!r}: max_output_tokens exceeds context_window")
    # Only OpenAI models are counted with their real tokenizer, unless configured otherwise.
    exact = entry.get("exact", provider == "openai")
    if not isinstance(exact, bool):
        raise ModelRegistryError(f"model {name!r}: exact must be true or false")
    return ModelInfo(
        name=name,
        provider=cast(Provider, provider),
        context_window=entry["context_window"],
        max_output_tokens=entry["max_output_tokens"],
        encoding=entry["encoding"],
        exact=exact,
    )
