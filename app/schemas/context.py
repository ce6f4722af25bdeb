"""Wire models of GET /sessions/{id}/context (docs/reference.md §Routes); the usage and
explain blocks are shared with POST /assemble-context."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, dataclasses
from typing_extensions import TypedDict

from app.core.context_settings import QueryOverrides
from app.core.limits import MAX_SQL_INT
from app.engine.assemble import ExplainStatus, Mode
from app.engine.budget import UsageCounts
from app.engine.prompt_cache import CacheReason
from app.engine.render import Format
from app.schemas.calibration import CalibrationRead
from app.schemas.common import SummaryState


class CacheUsage(BaseModel):
    prefix_tokens: int = Field(
        description="Tokens at the start of this context identical to the previous context "
        "served for this session and model (what a provider's prompt cache can read)."
    )
    reason: CacheReason = Field(
        description="Why the previous context is not a prefix of this one: none (it is), "
        "first (no previous context), or what changed."
    )
    breakpoints: int = Field(description="cache_control markers Foldwise placed.")


@dataclasses.dataclass(frozen=True)
class ContextUsage(UsageCounts):
    calibration: CalibrationRead
    cache: CacheUsage | None = Field(None, description="Session contexts only.")


# A mapping, not a model: a long session lists 50,000, built from the engine's and the
# database's values as they are.
class ExplainItem(TypedDict):
    """One message's part in the context: its status and the tokens it counts."""

    id: str
    seq: int
    status: ExplainStatus
    tokens: int


class DryRunRead(BaseModel):
    """What a dry run (`dry_run=true`) found about the fold the same request would make."""

    fold: Literal["none", "computed", "skipped"] = Field(
        description="none: the next request does not fold. computed: it does, and this "
        "response is the context after that fold (summary computed by the rule summarizer, "
        "not stored). skipped: it does, with an external model a dry run never calls; this "
        "response is the fitted context from before the fold (POST …/summarize folds now)."
    )
    messages_folded: int = Field(description="Messages the fold reads (0 when none).")
    strategy: str | None = Field(description="The summarizer strategy the fold uses.")


class ContextResponse(BaseModel):
    session_id: str
    model: str
    format: Format
    system: str | list[dict[str, Any]] | None = Field(
        description="A string, or (anthropic, cache_breakpoints) text blocks: the system prompt, "
        "then the summary section, each with a cache_control breakpoint when one is left, "
        "ready for messages.create(system=...)."
    )
    messages: list[dict[str, Any]]
    tools: list[dict[str, Any]] | None
    summary: SummaryState | None
    usage: ContextUsage
    messages_included: int
    messages_total: int
    summarized: bool
    warnings: list[str]
    explain: list[ExplainItem] | None = Field(None, description="Only with explain=true.")
    dry_run: DryRunRead | None = Field(None, description="Only with dry_run=true.")


class ContextRequest(QueryOverrides):
    """What to assemble, and any context setting: declared once for GET …/context's query and
    a turn's `context` (app/schemas/turns.py), which differ only in how they read values."""

    model: str | None = None
    max_tokens: int | None = Field(None, ge=1, le=MAX_SQL_INT)
    format: Format = "anthropic"
    summarize: Mode = "auto"
    explain: bool = False


class ContextQuery(ContextRequest):
    """The query of GET /sessions/{id}/context: what to assemble, any context setting, and two
    ways to look without acting (a turn, which acts, has neither)."""

    # Unknown keys never get here: every route refuses them (app/api/strict_query.py).
    model_config = ConfigDict(extra="ignore")

    preview: bool = Field(
        False,
        description="Look only: implies summarize=never and leaves the session untouched "
        "(no fold, and the served context is not recorded for usage.cache or POST …/usage).",
    )
    dry_run: bool = Field(
        False,
        description="The context the same request without dry_run would serve, fold included, "
        "with nothing stored (no summary, lease or record); see the response's `dry_run`.",
    )
