"""The registry against the installed provider SDKs: every model name their types know
resolves, to the right provider; what they mark deprecated, GET /models marks deprecated;
the default models are current ones. Upgrading an SDK that knows a new name or deprecates
one fails here until app/data/models.json (or model_families.json) follows."""

from __future__ import annotations

import inspect
import re
import typing
from typing import Any

import pytest
from anthropic.resources.messages import messages as anthropic_messages
from anthropic.types.model_param import ModelParam
from openai.types.shared import chat_model
from openai.types.shared.chat_model import ChatModel
from openai.types.shared.responses_model import ResponsesModel

from app.core.errors import UnknownModel
from app.core.settings import Settings
from app.summarizers.factory import DEFAULT_MODELS
from app.tokens.registry import ModelRegistry, load_registry

_ANNOUNCED = re.compile(
    r"((?:\"[^\"]+\",?\s*)+):\s*Announced\s+shutdown\s+date:\s*(\d{4}-\d{2}-\d{2})"
)


def _literals(annotation: Any) -> list[str]:
    """Every string of the Literal types inside `annotation` (Union[Literal[...], str], …)."""
    if isinstance(annotation, str):
        return [annotation]
    return [name for arg in typing.get_args(annotation) for name in _literals(arg)]


def _registry() -> ModelRegistry:
    return load_registry(Settings(_env_file=None, models_file=None))


ANTHROPIC = _literals(ModelParam)
OPENAI = sorted(set(_literals(ChatModel) + _literals(ResponsesModel)))


def _openai_shutdowns() -> dict[str, str]:
    """ChatModel's "Deprecated values" docstring: model name → announced shutdown date."""
    text = " ".join(inspect.getsource(chat_model).split())
    return {
        name: date
        for names, date in _ANNOUNCED.findall(text)
        for name in re.findall(r"\"([^\"]+)\"", names)
    }


def test_the_sdk_types_are_read() -> None:
    assert len(ANTHROPIC) >= 10 and len(OPENAI) >= 50
    assert len(_openai_shutdowns()) >= 20


@pytest.mark.parametrize(("name", "provider"), [(n, "anthropic") for n in ANTHROPIC] + [
    (n, "openai") for n in OPENAI
])  # fmt: skip
def test_every_model_the_sdks_know_resolves_to_its_provider(name: str, provider: str) -> None:
    model = _registry().get(name)  # UnknownModel fails the test
    assert (model.name, model.provider) == (name, provider)


def test_anthropic_deprecations_are_marked() -> None:
    registry = _registry()
    marked = 0
    for name in anthropic_messages.DEPRECATED_MODELS:
        try:
            model = registry.get(name)
        except UnknownModel:  # retired before the registry began (claude-2.1, …)
            continue
        if model.warning is None:  # an entry or one of its snapshots
            assert model.retires is not None, name
            marked += 1
    assert marked >= 5


def test_openai_shutdown_dates_are_the_registrys() -> None:
    registry = _registry()
    entries = {model.name: model for model in registry.all()}
    shutdowns = _openai_shutdowns()
    for name in entries.keys() & shutdowns.keys():
        assert entries[name].retires == shutdowns[name], name
    assert len(entries.keys() & shutdowns.keys()) >= 10


@pytest.mark.parametrize(
    "name", [Settings(_env_file=None).default_model, DEFAULT_MODELS["anthropic"]]
)
def test_the_default_models_are_current(name: str) -> None:
    model = _registry().get(name)
    assert name in ANTHROPIC and name not in anthropic_messages.DEPRECATED_MODELS
    assert model.warning is None and model.retires is None
