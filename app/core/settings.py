"""Service configuration: environment variables prefixed FOLDWISE_, or a .env file.

Every field here is documented in README.md's configuration table; keep both in step.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Annotated, Literal

from pydantic import Field, SecretStr, field_validator
from pydantic_settings import BaseSettings, NoDecode, SettingsConfigDict

from app.core.context_settings import ContextSettings
from app.core.logging import LogFormat


class Settings(BaseSettings, ContextSettings):
    """The service's settings; the context settings keys (app/core/context_settings.py) are
    the defaults every session and request starts from."""

    model_config = SettingsConfigDict(env_prefix="FOLDWISE_", env_file=".env", extra="ignore")

    database_url: str = "sqlite:///foldwise.db"
    # "tenant-a:key1,tenant-b:sha256:<hex>"; empty means open mode (loopback only).
    api_keys: SecretStr = SecretStr("")
    allow_open: bool = False
    max_body_bytes: int = Field(8 * 1024 * 1024, ge=1024)
    cors_origins: Annotated[list[str], NoDecode] = []
    # JSON file (or inline JSON list) of extra/overriding model registry entries.
    models_file: str | None = None
    default_model: str = "claude-sonnet-4-6"

    summary_model: str = "claude-haiku-4-5"
    summary_timeout_s: float = Field(30.0, gt=0)
    summary_max_retries: int = Field(1, ge=0)
    # Largest transcript (tokens) sent to the LLM in one call; longer spans fold in chunks.
    summary_input_tokens: int = Field(60_000, ge=1000)
    anthropic_api_key: SecretStr | None = Field(None, validation_alias="ANTHROPIC_API_KEY")
    anthropic_base_url: str | None = Field(None, validation_alias="ANTHROPIC_BASE_URL")
    openai_api_key: SecretStr | None = Field(None, validation_alias="OPENAI_API_KEY")
    openai_base_url: str | None = Field(None, validation_alias="OPENAI_BASE_URL")
    # FOLDWISE_EXACT_COUNTS: POST /count-tokens asks the provider's own count endpoint
    # (app/services/provider_counts.py; needs the key of the model's provider), and counts by
    # its own rule when that fails.
    exact_counts: bool = Field(False)

    # A fold lease not renewed for this long is abandoned (a crashed worker) and may be taken
    # over; the worker holding it renews it every third of this while its summarizer runs.
    fold_lease_s: float = Field(10.0, gt=0)
    # A request waits at most this long for another worker's fold (docs/reference.md
    # §Operations), then serves the fitted context (oldest units left out) with a warning.
    # Well under summary_timeout_s, and no shorter than a lease, so a crashed worker's lease
    # lapses within one wait.
    fold_wait_s: float = Field(10.0, gt=0)
    # Folds ahead of need (app/services/background_folds.py): a context past fold_ahead ×
    # the budget starts a fold beside the requests (default: 0.9 for an LLM fold, 1 — at the
    # budget — for a rule fold); a request over the budget waits for it at most
    # fold_hard_wait_s after it started (default: 0.25 s for a rule fold, 0 for an LLM fold),
    # then serves the fitted context with a warning. `summarize=force` and POST …/summarize
    # still fold in the request.
    fold_ahead: float | None = Field(None, gt=0, le=1)
    fold_hard_wait_s: float | None = Field(None, ge=0)
    # A request still running after this is answered 503 `request_timeout` (docs/reference.md
    # §Operations): longer than a fold can take (summary deadline + fold wait), so only a
    # stuck request meets it.
    request_timeout_s: float = Field(60.0, gt=0)
    # Connection hygiene (`foldwise serve`): a request's headers must arrive within
    # header_timeout_s and its body within body_timeout_s (8 MiB at ~300 KB/s), else the
    # connection is closed; idle keep-alive connections close after keep_alive_s.
    header_timeout_s: float = Field(10.0, gt=0)
    body_timeout_s: float = Field(30.0, gt=0)
    # A client that stops reading its response (the send buffer stays full, or stops
    # shrinking) for send_timeout_s is disconnected and its buffered response dropped.
    send_timeout_s: float = Field(30.0, gt=0)
    keep_alive_s: int = Field(5, ge=1)
    log_level: Literal["debug", "info", "warning", "error"] = "info"
    # `json`: one JSON object per line, for log pipelines (app/core/logging.py).
    log_format: LogFormat = "text"
    # One line per request (route template, status, duration, tenant), from MetricsMiddleware.
    access_log: bool = True
    # OpenTelemetry spans (app/core/tracing.py, the `otel` extra); an OTLP endpoint in the
    # standard OTEL_EXPORTER_OTLP_* variables turns them on too.
    tracing: bool = False
    # Served-context cache per process (app/services/response_cache.py): bodies of up to a few
    # hundred KB each, so 64 MiB holds hundreds of sessions; 0 turns it off.
    context_cache_bytes: int = Field(64 * 1024 * 1024, ge=0)

    # Retention (app/services/retention.py): a session idle (no write) for more than this many
    # days is deleted with all its rows; 0 keeps sessions forever. A session's `settings`
    # may override it (`retention_days`). Each replica sweeps every retention_sweep_s (0: no
    # background sweep; `foldwise purge` still works), retention_batch sessions per
    # transaction.
    retention_days: int = Field(0, ge=0, le=3650)
    retention_sweep_s: float = Field(3600.0, ge=0)
    retention_batch: int = Field(100, ge=1, le=10_000)

    @field_validator("log_level", "log_format", mode="before")
    @classmethod
    def _lower(cls, value: object) -> object:
        return value.lower() if isinstance(value, str) else value

    @field_validator("cors_origins", mode="before")
    @classmethod
    def _split_origins(cls, value: object) -> object:
        if isinstance(value, str):
            return [origin.strip() for origin in value.split(",") if origin.strip()]
        return value


@lru_cache
def get_settings() -> Settings:
    return Settings()
