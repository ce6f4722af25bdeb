"""The JSON the server returns, as TypedDicts (field for field the server's wire models:
app/schemas/ in the Foldwise repository). Timestamps stay ISO 8601 strings."""

from __future__ import annotations

from typing import Any, Literal, TypedDict

Format = Literal["anthropic", "openai", "openai_responses", "gemini", "raw"]
MessageFormat = Literal["raw", "openai_responses"]
SummarizeMode = Literal["auto", "never", "force"]
Strategy = Literal["auto", "rule", "llm", "hybrid"]
SummaryPlacement = Literal["system", "messages"]
SessionSort = Literal[
    "updated_at", "message_count", "total_tokens", "summary_version", "created_at", "id"
]
SortOrder = Literal["asc", "desc"]


class ContextSettings(TypedDict, total=False):
    """Per-session `settings`, and overrides of a context request (docs/reference.md §Settings)."""

    threshold: float
    reserved_output_tokens: int
    keep_recent: int
    pin_first_message: bool
    summary_placement: SummaryPlacement
    strategy: Strategy
    summarizer: str | None
    max_summary_tokens: int
    fold_target: float
    prune_target: float
    prune_at_least: int
    keep_media: int
    cache_breakpoints: bool


class ContextQuery(ContextSettings, total=False):
    """What a turn asks of its context (`turn(**query)`): GET …/context's query but `preview`
    and `dry_run`, which only look."""

    model: str
    max_tokens: int
    format: Format
    summarize: SummarizeMode
    explain: bool


class SessionSettings(ContextSettings, total=False):
    """A session's `settings`: its context settings, and how long it is kept when idle
    (`retention_days`; `None` in an update: back to the server's default)."""

    retention_days: int | None


class SummaryState(TypedDict):
    text: str | None
    version: int
    through_id: str | None
    through_seq: int
    message_count: int
    tokens: int
    method: str | None


class Session(TypedDict):
    id: str
    model: str
    system_prompt: str | None
    tools: list[dict[str, Any]] | None
    settings: dict[str, Any]
    metadata: dict[str, Any]
    message_count: int
    total_tokens: int
    summary: SummaryState | None
    created_at: str
    updated_at: str


class SessionsDeleted(TypedDict):
    deleted: int  # sessions removed, each with every row it owns


class SessionImport(TypedDict):
    """`import_session`: `created`, or `unchanged` when the tenant already holds the very same
    session (an import is idempotent by session id)."""

    id: str
    status: Literal["created", "unchanged"]
    messages: int
    summaries: int
    checksum: str


class SessionPage(TypedDict):
    sessions: list[Session]
    next_cursor: str | None


class AppendedMessage(TypedDict):
    id: str
    seq: int
    token_count: int
    created_at: str
    client_id: str | None
    duplicate: bool
    indexes: list[int]  # the posted entries this stored message holds (grouped Responses items)


class AppendResult(TypedDict):
    messages: list[AppendedMessage]


class _StoredFields(TypedDict):
    id: str
    seq: int
    role: str
    content: Any
    name: str | None
    tool_calls: list[dict[str, Any]] | None
    tool_call_id: str | None
    metadata: dict[str, Any]
    token_count: int
    client_id: str | None
    created_at: str


class StoredMessage(_StoredFields):
    # list_messages(format="openai_responses"): the message as Responses input items; else None.
    items: list[dict[str, Any]] | None


class PoppedMessage(_StoredFields):
    """`DELETE …/messages/last`: the removed message and its rendering as Responses items."""

    items: list[dict[str, Any]]


class MessagePage(TypedDict):
    messages: list[StoredMessage]
    next_after_seq: int | None


class Calibration(TypedDict):
    family: str
    ratio: float
    samples: int


class CacheUsage(TypedDict):
    prefix_tokens: int
    reason: str
    breakpoints: int


class ContextUsage(TypedDict, total=False):
    context_window: int
    threshold: float
    reserved_output_tokens: int
    budget: int
    system_tokens: int
    tools_tokens: int
    summary_tokens: int
    message_tokens: int
    media_tokens: int  # of message_tokens: images, documents and audio, as their provider bills
    estimated_tokens: int
    total_tokens: int
    calibration: Calibration
    cache: CacheUsage | None


class ExplainItem(TypedDict):
    id: str
    seq: int
    status: str
    tokens: int


class DryRun(TypedDict):
    """`dry_run=true`: the fold the same request would make (none, computed, or skipped: a
    fold by an external model, which a dry run never calls)."""

    fold: Literal["none", "computed", "skipped"]
    messages_folded: int
    strategy: str | None


class SummarizeResult(TypedDict):
    session_id: str
    folded: bool
    messages_folded: int
    summary: SummaryState | None
    method: str | None
    fallback: str | None
    stats: dict[str, Any] | None


class SummaryUsage(TypedDict):
    """What a fold's model call was billed for, and how the model was asked."""

    input_tokens: int
    cache_read_tokens: int
    cache_write_tokens: int
    output_tokens: int
    prompt: Literal["fresh", "cached_prefix"] | None
    prompt_note: str | None


class SummaryHistoryItem(TypedDict):
    text: str | None
    version: int
    through_id: str | None
    through_seq: int
    message_count: int
    tokens: int
    method: str
    model: str | None
    tokens_in: int
    tokens_out: int
    usage: SummaryUsage | None
    stats: dict[str, Any]
    created_at: str


class SummaryHistoryPage(TypedDict):
    summaries: list[SummaryHistoryItem]
    next_cursor: str | None


class UsageReportResult(TypedDict):
    session_id: str
    model: str
    estimated_tokens: int
    input_tokens: int
    calibration: Calibration


class MediaCount(TypedDict):
    """One image, document or audio block of a count, as its provider bills it."""

    path: str  # where it is in the body: "messages[2].content[1]"
    kind: str  # "image", "document" or "audio"
    label: str  # "PNG image 1920×1080", "PDF, 12 pages"
    tokens: int
    exact: bool


class TokenCount(TypedDict):
    tokens: int
    encoding: str
    exact: bool  # only where the tokenizer and every media rule are the provider's own
    model: str
    media: list[MediaCount]
    media_rule: str  # how the model bills media (the server's docs/media-counting.md)
    counted_by: Literal["rules", "provider"]  # "provider": FOLDWISE_EXACT_COUNTS answered
    warnings: list[str]  # e.g. a model not in the registry, counted by its family's rules


class SummarizeContextResult(TypedDict):
    summary: str
    summary_tokens: int
    strategy: str
    fallback: str | None
    input_messages: int
    input_tokens: int
    cached: bool
    model: str | None
    usage: SummaryUsage | None


class ModelInfo(TypedDict):
    name: str
    provider: str
    context_window: int
    max_output_tokens: int
    encoding: str
    exact: bool
    media: str  # how the model bills images, PDFs and audio: a rule name
    retires: str | None  # announced shutdown date (YYYY-MM-DD) of a deprecated model
    deprecated: bool
