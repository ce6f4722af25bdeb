"""Wire models of usage calibration: POST /sessions/{id}/usage and the `usage.calibration`
block (docs/reference.md §Calibration)."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from app.schemas.input_types import Text, TokenCount


class CalibrationRead(BaseModel):
    family: str
    ratio: float
    samples: int


class UsageReport(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)

    model: Text | None = Field(None, description="Default: the session's model.")
    input_tokens: TokenCount = Field(ge=1, description="What the provider counted for the context.")


class UsageReportResponse(BaseModel):
    session_id: str
    model: str
    estimated_tokens: int
    input_tokens: int
    calibration: CalibrationRead
