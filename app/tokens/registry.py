"""The model registry: context windows, output limits and the encoding used to count.

Entries come from the packaged `app/data/models.json`, then `settings.models_file` (a path
to a JSON file, or an inline JSON list) adds entries or replaces them by name. A replacing
entry may give only the fields it changes. An entry's `retires` is the provider's announced
shutdown date (the model is deprecated).

A model id resolves, in order, to:
1. its entry;
2. a dated snapshot of an entry: the entry's name, then a date or tag (`-20250929`,
   `-2024-07-18`, `-0613`, `-latest`, `@20250929`, `:tag`), so `gpt-4o-mini-2024-07-18`
   counts as `gpt-4o-mini`;
3. a family (`app/data/model_families.json`: `claude-…`, `gpt-5.x-…`, `o3-…`, `gemini-…`,
   …): a newer model than this list knows, counted with its family's rules and a warning
   saying so (`claude-sonnet-4-7` is not silently `claude-sonnet-4`, nor `gpt-4-32k` `gpt-4`);
4. else 422 `unknown_model`, naming the closest known names of its provider.

The resolved `ModelInfo.name` is always the id asked for: responses echo it, never another.

Providers: `anthropic` (Claude), `openai` and `gemini` (Google). Only OpenAI models are counted
with their own tokenizer (`exact`); Claude and Gemini tokenizers are not published, so their
counts are estimates (Gemini's with `o200k_base`), each provider calibrated on its own
(`ModelInfo.family`).
"""

from __future__ import annotations

import dataclasses
import difflib
import functools
import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any, Literal, cast

from app.core.errors import UnknownModel
from app.core.settings import Settings
from app.tokens.encodings import ENCODING_NAMES
from app.tokens.media.rules import media_rules

Provider = Literal["anthropic", "openai", "gemini"]
PROVIDERS: tuple[str, ...] = ("anthropic", "openai", "gemini")
_FIELDS = (
    "name",
    "provider",
    "context_window",
    "max_output_tokens",
    "encoding",
    "exact",
    "retires",
    "media",
)
# The media rule of an entry that names none (a model added by configuration): the costliest
# of its provider's generations, so its media are never under-counted; for Gemini its newest
# generation (a model configured now is a 3.x one; its flat 1,120 an image is less than 2.x's
# tiles for images above 4 tiles).
DEFAULT_MEDIA = {
    "anthropic": "claude-high-res",
    "openai": "openai-tiles-4o",
    "gemini": "gemini-3",
}
# What may follow an entry's name in the id of one of its snapshots: a date (20250929,
# 2024-07-18), a four-digit version (gpt-4-0613), `latest`, or anything after `@` or `:`.
_SNAPSHOT = re.compile(r"-(?:\d{8}|\d{4}-\d{2}-\d{2}|\d{4}|latest)\Z|[@:].*\Z", re.DOTALL)
_DATE = re.compile(r"\d{4}-\d{2}-\d{2}")
# Close names an UnknownModel message suggests, and how alike they must be (difflib ratio).
_SUGGESTIONS = 3
_SIMILARITY = 0.5
# Resolutions of ids that are not entries, kept per registry (ids come from clients: bounded).
_RESOLVED_CACHE = 1024


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
    """True only where `encoding` is the model's own tokenizer (OpenAI); Claude and Gemini are
    estimated."""
    retires: str | None = None
    """The announced shutdown date (ISO) of a deprecated model."""
    media: str = "claude-standard"
    """How the model's provider and generation bill images, PDFs and audio: a rule of
    app/data/media_rules.json (app/tokens/media/rules.py)."""
    warning: str | None = None
    """Set when the id is not in the registry and its family's rules count it."""

    @property
    def family(self) -> str:
        """Calibration key: the provider for estimated providers ("anthropic", "gemini": their
        tokenizers are not the encoding they are counted with), the encoding name for OpenAI."""
        return self.encoding if self.provider == "openai" else self.provider


@dataclass(frozen=True)
class ModelFamily:
    """Rules for the ids of a family that have no entry: a newer model of a known line."""

    name: str
    pattern: re.Pattern[str]
    rules: ModelInfo


class ModelRegistry:
    def __init__(self, models: list[ModelInfo], families: Sequence[ModelFamily] = ()) -> None:
        self._by_name = {model.name: model for model in models}
        self._families = tuple(families)
        self._resolve = functools.lru_cache(maxsize=_RESOLVED_CACHE)(self._resolved)

    def get(self, name: str) -> ModelInfo:
        """The model `name` resolves to (module docstring), named `name`; else UnknownModel."""
        model = self._by_name.get(name)
        return model if model is not None else self._resolve(name)

    def all(self) -> list[ModelInfo]:
        return sorted(self._by_name.values(), key=lambda model: (model.provider, model.name))

    def _resolved(self, name: str) -> ModelInfo:
        snapshot_of = _SNAPSHOT.sub("", name, count=1)
        entry = self._by_name.get(snapshot_of)
        if entry is not None and snapshot_of != name:
            return dataclasses.replace(entry, name=name)
        for family in self._families:
            if family.pattern.match(name):
                rules = family.rules
                warning = (
                    f"model {name!r} is not in the model registry: counted with the rules of "
                    f"the {family.name} family ({rules.context_window}-token window, "
                    f"{rules.encoding}); add it with FOLDWISE_MODELS_FILE (see GET /models)"
                )
                return dataclasses.replace(rules, name=name, warning=warning)
        raise self._unknown(name)

    def _unknown(self, name: str) -> UnknownModel:
        """UnknownModel naming the closest known names, of the provider the id suggests."""
        provider = _provider_of(name)
        names = [m.name for m in self._by_name.values() if provider in (None, m.provider)]
        close = difflib.get_close_matches(name, names, _SUGGESTIONS, _SIMILARITY)
        hint = f"did you mean {', '.join(close)}? " if close else ""
        return UnknownModel(
            f"unknown model {name!r}; {hint}GET /models lists the known models",
            {"model": name, "suggestions": close},
        )


def _provider_of(name: str) -> Provider | None:
    lowered = name.lower()
    if lowered.startswith("claude"):
        return "anthropic"
    if lowered.startswith(("gpt", "chatgpt", "o1", "o3", "o4", "codex")):
        return "openai"
    if lowered.startswith("gemini-"):
        return "gemini"
    return None


def load_registry(settings: Settings) -> ModelRegistry:
    """The packaged registry plus `settings.models_file` overrides, built once per value."""
    return _load_registry(settings.models_file)


@functools.cache
def _load_registry(models_file: str | None) -> ModelRegistry:
    data = resources.files("app") / "data"
    packaged = (data / "models.json").read_text("utf-8")
    entries = {e["name"]: e for e in _entry_list(packaged, "models.json")}
    if models_file:
        source, text = _override_text(models_file)
        for entry in _entry_list(text, source):
            entries[entry["name"]] = {**entries.get(entry["name"], {}), **entry}
    families = json.loads((data / "model_families.json").read_text("utf-8"))
    return ModelRegistry(
        [_model_info(entry) for entry in entries.values()],
        [_family(entry) for entry in families],
    )


def _family(entry: dict[str, Any]) -> ModelFamily:
    rules = {k: v for k, v in entry.items() if k not in ("family", "pattern")}
    info = _model_info({**rules, "name": entry["family"]})
    return ModelFamily(entry["family"], re.compile(entry["pattern"]), info)


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
    # Only OpenAI models are counted with their real tokenizer, unless configured otherwise
    # (Claude and Gemini are estimates).
    exact = entry.get("exact", provider == "openai")
    if not isinstance(exact, bool):
        raise ModelRegistryError(f"model {name!r}: exact must be true or false")
    retires = entry.get("retires")
    if retires is not None and not (isinstance(retires, str) and _DATE.fullmatch(retires)):
        raise ModelRegistryError(f"model {name!r}: retires must be a date (YYYY-MM-DD) or null")
    media = entry.get("media", DEFAULT_MEDIA[provider])
    if media not in media_rules():
        raise ModelRegistryError(
            f"model {name!r}: media must be one of {sorted(media_rules())} (media_rules.json)"
        )
    return ModelInfo(
        name=name,
        media=media,
        provider=cast(Provider, provider),
        context_window=entry["context_window"],
        max_output_tokens=entry["max_output_tokens"],
        encoding=entry["encoding"],
        exact=exact,
        retires=retires,
    )
