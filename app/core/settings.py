"""Service configuration: environment variables prefixed FOLDWISE_, or a .env file.

Each field's docstring is its documentation: README.md's configuration table and
docs/reference.md's context settings are written from them (`python -m
app.core.settings_docs`; a test fails when they differ).
"""

from __future__ import annotations

from functools import lru_cache
from typing import Annotated, Literal

from pydantic import AliasChoices, Field, SecretStr, field_validator
from pydantic_settings import BaseSettings, NoDecode, SettingsConfigDict

from app.core.context_settings import ContextSettings, SummarizerProvider
from app.core.logging import LogFormat


class Settings(BaseSettings, ContextSettings):
    """The service's settings; the context settings keys (app/core/context_settings.py) are
    the defaults every session and request starts from."""

    model_config = SettingsConfigDict(
        env_prefix="FOLDWISE_",
        env_file=".env",
        extra="ignore",
        use_attribute_docstrings=True,
        populate_by_name=True,
    )

    database_url: str = "sqlite:///foldwise.db"
    """`sqlite:///path.db` or `postgresql://user:pass@host:5432/db`; the async driver is picked
    automatically"""
    # "tenant-a:key1,tenant-b:sha256:<hex>"; empty means open mode (loopback only).
    api_keys: SecretStr = SecretStr("")
    """`tenant-a:key1,tenant-b:sha256:<hex digest of the key>`"""
    allow_open: bool = False
    """allow serving without keys on a non-loopback address"""
    max_body_bytes: int = Field(8 * 1024 * 1024, ge=1024)
    """larger request bodies get 413 `payload_too_large`"""
    cors_origins: Annotated[list[str], NoDecode] = []
    """comma-separated origins allowed to call from a browser"""
    # JSON file (or inline JSON list) of extra/overriding model registry entries.
    models_file: str | None = None
    """JSON file (or inline JSON list) adding/overriding model registry entries (fields as in
    `GET /models`: `name`, `provider`, `context_window`, `max_output_tokens`, `encoding`,
    `exact`, `retires`, `media`: a rule of [media counting](docs/media-counting.md))"""
    default_model: str = "claude-sonnet-4-6"
    """model of new sessions and of `/count-tokens` without `model`"""

    summarizer_provider: SummarizerProvider = "anthropic"
    """API of the LLM summarizer: `anthropic`, `openai` (OpenAI, or any OpenAI-compatible server
    at `FOLDWISE_SUMMARIZER_BASE_URL`) or `gemini`"""
    summarizer_model: str | None = Field(
        None, validation_alias=AliasChoices("FOLDWISE_SUMMARIZER_MODEL", "FOLDWISE_SUMMARY_MODEL")
    )
    """model of the LLM summarizer (`FOLDWISE_SUMMARY_MODEL` still read); default by provider:
    `claude-haiku-4-5`, `gpt-5-mini`, `gemini-2.5-flash`"""
    summarizer_base_url: str | None = None
    """an OpenAI-compatible server (vLLM, Ollama, LiteLLM, llama.cpp) for provider `openai`;
    no `OPENAI_API_KEY` needed"""
    summarizer_openai_api: Literal["auto", "responses", "chat"] = "auto"
    """OpenAI API the summarizer calls: `responses`, `chat` (Chat Completions), or `auto`:
    `chat` on `FOLDWISE_SUMMARIZER_BASE_URL`, `responses` on OpenAI"""
    summarizer_models: Annotated[list[str], NoDecode] = []
    """comma-separated `provider:model` pairs a session's `summarizer` setting may pick
    (`provider:*`: any model of it); empty: only the configured provider and model"""
    summarizer_template: str | None = None
    """file holding the fold instruction (placeholders `{previous_summary}`, `{transcript}`,
    `{focus}`, `{max_tokens}`, `{sections}`), checked at start
    ([your own instruction](docs/summarizers.md#your-own-instruction))"""
    summarizer_cached_prefix: bool = True
    """fold on the last served context when the summarizer speaks its format, so the provider
    bills it at its cache-read price ([folds on the cached prefix](docs/summarizers.md))"""
    summary_timeout_s: float = Field(30.0, gt=0)
    """total LLM deadline, retries included"""
    summary_max_retries: int = Field(1, ge=0)
    """LLM retries before falling back to `rule`"""
    # Largest transcript (tokens) sent to the LLM in one call; longer spans fold in chunks.
    summary_input_tokens: int = Field(60_000, ge=1000)
    """largest span sent to the LLM at once; longer spans fold in chunks"""
    anthropic_api_key: SecretStr | None = Field(None, validation_alias="ANTHROPIC_API_KEY")
    """enables the `anthropic` summarizer"""
    anthropic_base_url: str | None = Field(None, validation_alias="ANTHROPIC_BASE_URL")
    """proxy / gateway for the Anthropic API"""
    openai_api_key: SecretStr | None = Field(None, validation_alias="OPENAI_API_KEY")
    """enables the `openai` summarizer (sent to `FOLDWISE_SUMMARIZER_BASE_URL` too, when set),
    and lets exact mode ask OpenAI's count endpoint"""
    openai_base_url: str | None = Field(None, validation_alias="OPENAI_BASE_URL")
    """proxy / gateway for the OpenAI API"""
    gemini_api_key: SecretStr | None = Field(None, validation_alias="GEMINI_API_KEY")
    """enables the `gemini` summarizer"""
    gemini_base_url: str | None = Field(None, validation_alias="GEMINI_BASE_URL")
    """proxy / gateway for the Gemini API"""
    # FOLDWISE_EXACT_COUNTS: POST /count-tokens asks the provider's own count endpoint
    # (app/services/provider_counts.py; needs the key of the model's provider), and counts by
    # its own rule when that fails.
    exact_counts: bool = Field(False)
    """`POST /count-tokens` asks the provider's own count endpoint (Anthropic `count_tokens`,
    OpenAI `responses.input_tokens`; none for Gemini models, whose counts stay estimates)
    when its key is set; 5 s deadline, cached by content hash, Foldwise's rules when it fails
    ([media](docs/media-counting.md#exact-mode))"""

    # A fold lease not renewed for this long is abandoned (a crashed worker) and may be taken
    # over; the worker holding it renews it every third of this while its summarizer runs.
    fold_lease_s: float = Field(10.0, gt=0)
    """a fold lease not renewed for this long is taken over (crashed worker); a live fold renews
    it every third of this"""
    # A request waits at most this long for another worker's fold (docs/reference.md
    # §Operations), then serves the fitted context (oldest units left out) with a warning.
    # Well under summary_timeout_s, and no shorter than a lease, so a crashed worker's lease
    # lapses within one wait.
    fold_wait_s: float = Field(10.0, gt=0)
    """longest a request waits for another worker's fold before serving the fitted context"""
    # Folds ahead of need (app/services/background_folds.py): a context past fold_ahead ×
    # the budget starts a fold beside the requests (default: 0.9 for an LLM fold, 1 — at the
    # budget — for a rule fold); a request over the budget waits for it at most
    # fold_hard_wait_s after it started (default: 0.25 s for a rule fold, 0 for an LLM fold),
    # then serves the fitted context with a warning. `summarize=force` and POST …/summarize
    # still fold in the request.
    fold_ahead: float | None = Field(None, gt=0, le=1)
    """a context past this share of the budget starts its fold in the background, before the
    budget needs it (`1`: once over the budget); see [folds ahead of
    need](#folds-ahead-of-need)"""
    fold_hard_wait_s: float | None = Field(None, ge=0)
    """longest a request over the budget waits for the fold it needs, counted from the fold's
    start; then the fitted context is served with a warning"""
    # A request still running after this is answered 503 `request_timeout` (docs/reference.md
    # §Operations): longer than a fold can take (summary deadline + fold wait), so only a
    # stuck request meets it.
    request_timeout_s: float = Field(60.0, gt=0)
    """a request still running after this gets 503 `request_timeout`, and its work in worker
    threads stops"""
    # Connection hygiene (`foldwise serve`): a request's headers must arrive within
    # header_timeout_s and its body within body_timeout_s (8 MiB at ~300 KB/s), else the
    # connection is closed; idle keep-alive connections close after keep_alive_s.
    header_timeout_s: float = Field(10.0, gt=0)
    """`serve`: a request's headers must arrive within this, or the connection is closed"""
    body_timeout_s: float = Field(30.0, gt=0)
    """`serve`: a request's whole body must arrive within this, or the connection is closed"""
    # A client that stops reading its response (the send buffer stays full, or stops
    # shrinking) for send_timeout_s is disconnected and its buffered response dropped.
    send_timeout_s: float = Field(30.0, gt=0)
    """`serve`: a client that reads nothing of its pending response for this long is
    disconnected (the buffered response dropped)"""
    keep_alive_s: int = Field(5, ge=1)
    """`serve`: idle keep-alive connections are closed after this"""
    log_level: Literal["debug", "info", "warning", "error"] = "info"
    """`debug` (adds SQL statements), `info`, `warning`, `error`"""
    # `json`: one JSON object per line, for log pipelines (app/core/logging.py).
    log_format: LogFormat = "text"
    """`text` (`time LEVEL logger: event key=value …`) or `json` (one object per line);
    uvicorn's lines too, see [logs](#logs)"""
    # One line per request (route template, status, duration, tenant), from MetricsMiddleware.
    access_log: bool = True
    """one log line per request (method, route template, status, duration, tenant); off, only
    refused and failed requests are logged"""
    # OpenTelemetry spans (app/core/tracing.py, the `otel` extra); an OTLP endpoint in the
    # standard OTEL_EXPORTER_OTLP_* variables turns them on too.
    tracing: bool = False
    """OpenTelemetry spans (the `otel` extra); an OTLP endpoint in `OTEL_EXPORTER_OTLP_ENDPOINT`
    turns them on too, see [traces](#traces)"""
    # Response cache per process (app/services/response_cache.py): bodies of up to a few
    # hundred KB each, so 64 MiB holds hundreds of sessions; 0 turns it off.
    context_cache_bytes: int = Field(64 * 1024 * 1024, ge=0)
    """memory per process for served contexts (step 0 below; `foldwise_context_cache_*` in
    `/metrics`); `0` turns the cache off"""

    # Retention (app/services/retention.py): a session idle (no write) for more than this many
    # days is deleted with all its rows; 0 keeps sessions forever. A session's `settings`
    # may override it (`retention_days`). Each replica sweeps every retention_sweep_s (0: no
    # background sweep; `foldwise purge` still works), retention_batch sessions per
    # transaction.
    retention_days: int = Field(0, ge=0, le=3650)
    """delete sessions idle (no write) for more than this many days, with all their rows; a
    session's `settings.retention_days` overrides it ([data lifecycle](#data-lifecycle))"""
    retention_sweep_s: float = Field(3600.0, ge=0)
    """each replica's retention sweep runs this often (±20 %); `0`: no background sweep"""
    retention_batch: int = Field(100, ge=1, le=10_000)
    """sessions deleted per transaction by a sweep or a purge"""

    @field_validator("log_level", "log_format", mode="before")
    @classmethod
    def _lower(cls, value: object) -> object:
        return value.lower() if isinstance(value, str) else value

    @field_validator("cors_origins", "summarizer_models", mode="before")
    @classmethod
    def _split_origins(cls, value: object) -> object:
        if isinstance(value, str):
            return [origin.strip() for origin in value.split(",") if origin.strip()]
        return value


@lru_cache
def get_settings() -> Settings:
    return Settings()
