"""The context settings keys (docs/reference.md §Settings): name, type, bounds and default of
each, declared once, in `ContextSettings`.

Everything else derives from it:
- `app.core.settings.Settings` inherits it, so `FOLDWISE_<KEY>` sets the service default;
- the engine reads a resolved `ContextSettings` (strategy and summarizer aside, which pick the
  summarizer);
- `ContextOverrides` (every key optional, unknown keys rejected) is a session's `settings`
  and the settings part of the POST /assemble-context body: strict JSON types, as the schema
  says (`false` is not 0, `0` is not false); `QueryOverrides`, the same keys in GET …/context's
  query, reads query text (`true`, `1`, `yes`, `900`) as booleans and numbers;
- `SETTINGS_KEYS` lists the keys.
Adding a setting is one field here plus the code that uses it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Annotated, Any, Literal, Optional, get_args

from pydantic import BaseModel, ConfigDict, Field, create_model

from app.core.limits import MAX_SQL_INT

SummaryPlacement = Literal["system", "messages"]
Strategy = Literal["auto", "rule", "llm", "hybrid"]
SummarizerProvider = Literal["anthropic", "openai", "gemini"]
# A summarizer choice: `provider` or `provider:model`.
SUMMARIZER_PATTERN = rf"^({'|'.join(get_args(SummarizerProvider))})(:[^\s:][^\s]{{0,127}})?$"


class ContextSettings(BaseModel):
    """One context's settings; the defaults are the service's unless FOLDWISE_<KEY> says else."""

    # Each field's docstring is its documentation (app/core/settings_docs.py writes the tables).
    model_config = ConfigDict(frozen=True, use_attribute_docstrings=True)

    threshold: float = Field(0.8, gt=0, le=1)
    """budget = floor(threshold × context window) − reserved output"""
    reserved_output_tokens: int = Field(4096, ge=0, le=MAX_SQL_INT)
    """tokens kept free for the reply"""
    keep_recent: int = Field(6, ge=0, le=MAX_SQL_INT)
    """newest messages never pruned or folded"""
    pin_first_message: bool = True
    """keep the first user message (the task) verbatim"""
    summary_placement: SummaryPlacement = "system"
    """`system` (appended to the system prompt) or `messages` (a synthetic pair)"""
    strategy: Strategy = "auto"
    """summarizer: `auto`, `rule`, `llm`, `hybrid`"""
    summarizer: str | None = Field(None, pattern=SUMMARIZER_PATTERN)
    """the LLM summarizer's `provider` or `provider:model` (`openai:gpt-5-mini`), one the
    server allows (`FOLDWISE_SUMMARIZER_MODELS`); none: the server's
    `FOLDWISE_SUMMARIZER_PROVIDER` and `_MODEL`"""
    max_summary_tokens: int = Field(1000, ge=50, le=MAX_SQL_INT)
    """upper bound of a summary"""
    # A fold brings the context down to fold_target × budget, well under it, so the
    # next few turns are served verbatim instead of folding again at once (hysteresis); lower
    # when that leaves room for too few messages (app/engine/folds.py, RUNWAY_MESSAGES).
    fold_target: float = Field(0.6, gt=0, le=1)
    """a fold brings the context down to this share of the budget, or lower when that would
    leave room for fewer than 32 messages of the session's average size (a tight budget folds
    down to the recent messages; see [prompt caching](#output-shape-and-prompt-caching))"""
    # Pruning has the same hysteresis: when it must prune, it prunes the oldest eligible
    # content down to prune_target × budget, and at least prune_at_least tokens (a cache
    # break must pay for itself), so the following turns only append; a prune that cannot
    # reach fold_target × budget folds instead (README, "Output shape and prompt caching").
    prune_target: float = Field(0.6, gt=0, le=1)
    """when pruning must prune, it prunes down to this share of the budget, lowered like
    `fold_target` (see [prompt caching](#output-shape-and-prompt-caching))"""
    prune_at_least: int = Field(1024, ge=0)
    """…and frees at least this many tokens (a cache break must pay for itself)"""
    # Old media is a cheap tier: when pruning, images and documents older than the newest
    # keep_media are replaced by a placeholder naming what was there and which message holds
    # it (app/engine/media.py); like Anthropic's computer-use loop, the newest 3 by default.
    keep_media: int = Field(3, ge=0, le=MAX_SQL_INT)
    """when pruning, images, documents and audio older than the newest this many are sent as a
    one-line placeholder naming them and the message that stores them
    ([media](docs/media-counting.md#old-media-is-a-cheap-tier))"""
    # Anthropic `cache_control` breakpoints in `format=anthropic` contexts.
    cache_breakpoints: bool = True
    """`format=anthropic`: place `cache_control` breakpoints"""


SETTINGS_KEYS = tuple(ContextSettings.model_fields)


def _optional_fields() -> dict[str, Any]:
    """Each key of ContextSettings as `T | None = None`, its bounds kept on T."""
    fields: dict[str, Any] = {}
    for name, info in ContextSettings.model_fields.items():
        kind: Any = info.annotation
        if info.metadata:
            kind = Annotated[(kind, *info.metadata)]
        fields[name] = (Optional[kind], None)  # noqa: UP045 (a runtime type expression)
    return fields


if TYPE_CHECKING:  # the fields are built at run time, from ContextSettings

    class ContextOverrides(BaseModel):
        pass

    class QueryOverrides(BaseModel):
        pass
else:
    ContextOverrides = create_model(
        "ContextOverrides",
        __config__=ConfigDict(extra="forbid", strict=True),
        __doc__="Context settings keys to override; all optional, unknown keys rejected.",
        **_optional_fields(),
    )
    QueryOverrides = create_model(
        "QueryOverrides",
        __config__=ConfigDict(extra="forbid"),
        __doc__="Context settings keys to override, read from a query string.",
        **_optional_fields(),
    )


def resolve_settings(
    defaults: ContextSettings, *layers: Mapping[str, Any] | None
) -> ContextSettings:
    """Every key from the last layer that sets it (None = not set), else from `defaults`.

    Layers come validated (a session's stored settings, a request's overrides): no second
    validation on the hot path.
    """
    values = {key: getattr(defaults, key) for key in SETTINGS_KEYS}
    for layer in layers:
        for key, value in (layer or {}).items():
            if key in values and value is not None:
                values[key] = value
    return ContextSettings.model_construct(**values)
