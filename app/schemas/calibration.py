"""Wire models of usage calibration: POST /sessions/{id}/usage and the `usage.calibration`
block (docs/reference.md §Calibration)."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from app.schemas.input_types import MessageJson, Text, TokenCount, ToolJson


class CalibrationRead(BaseModel):
    family: str
    ratio: float
    samples: int


class Unserved(BaseModel):
    """What a provider request carried beyond the served context: an agent's own
    instructions and tools, input added after the context was read."""

    model_config = ConfigDict(extra="forbid", strict=True)

    system: Text | None = None
    messages: list[MessageJson] | None = Field(None, max_length=10_000)
    tools: list[ToolJson] | None = None


class UsageReport(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)

    model: Text | None = Field(None, description="Default: the session's model.")
    input_tokens: TokenCount = Field(ge=1, description="What the provider counted for the context.")
    unserved: Unserved | None = Field(
        None,
        description="What the provider also counted beyond the last served context: Foldwise "
        "counts it as it counts a context and learns input_tokens against the sum.",
    )


class UsageReportResponse(BaseModel):
    session_id: str
    model: str
    estimated_tokens: int
    input_tokens: int
    calibration: CalibrationRead
