"""Wire models of POST /sessions/{id}/turn: the two bodies of an append and a context read,
composed, so a client keeps the types it has for each."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field, model_validator

from app.schemas.context import ContextQuery, ContextRequest, ContextResponse
from app.schemas.messages import AppendResult, MessagesAppend

# GET …/context's ways to look without acting (`preview`, `dry_run`).
LOOK_ONLY = frozenset(ContextQuery.model_fields) - frozenset(ContextRequest.model_fields)


class TurnContext(ContextRequest):
    """GET …/context's query as a JSON object: the same keys, bounds and defaults, read as
    strict JSON types (`true`, not `"true"`). `preview` and `dry_run` are refused: they
    promise a read that changes nothing, and a turn appends."""

    model_config = ConfigDict(extra="forbid", strict=True)

    @model_validator(mode="before")
    @classmethod
    def _no_look_only(cls, data: Any) -> Any:
        refused = sorted(LOOK_ONLY & data.keys()) if isinstance(data, dict) else []
        if refused:
            raise ValueError(
                f"{' and '.join(refused)}: a turn appends, so it cannot only look; "
                "GET /sessions/{id}/context takes them"
            )
        return data


class TurnRequest(MessagesAppend):
    """The messages to append, exactly as POST …/messages takes them, and the context query."""

    context: TurnContext = Field(
        default_factory=TurnContext,
        description="GET …/context's query parameters as JSON (model, max_tokens, format, "
        "summarize, explain, and any context setting); {} for the defaults.",
    )


class TurnResponse(BaseModel):
    append: AppendResult = Field(description="The POST …/messages body of this append.")
    context: ContextResponse = Field(
        description="The GET …/context body of the same query right after the append."
    )


__all__ = ["TurnContext", "TurnRequest", "TurnResponse"]
