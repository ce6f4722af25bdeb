"""Response bodies of an assembled context: GET …/context, and the usage and explain blocks
POST /assemble-context shares."""

from __future__ import annotations

import bisect
import dataclasses
from collections.abc import Sequence

from app.engine.assemble import ExplainEntry
from app.engine.budget import Usage
from app.repositories.context import Covered
from app.schemas.calibration import CalibrationRead
from app.schemas.context import (
    CacheUsage,
    ContextResponse,
    ContextUsage,
    DryRunRead,
    ExplainItem,
)
from app.services.calibration import calibration_read
from app.services.context import ContextOptions, Served


def usage_block(
    usage: Usage, calibration: CalibrationRead, cache: CacheUsage | None = None
) -> ContextUsage:
    counts = dataclasses.asdict(usage)
    del counts["calibration_ratio"]  # the calibration block carries it, with family and samples
    return ContextUsage(**counts, calibration=calibration, cache=cache)


def explain_items(
    entries: tuple[ExplainEntry, ...], covered: Sequence[Covered] = ()
) -> list[ExplainItem]:
    """The engine's entries (synthetic ones first, then stored ones in seq order) with the
    `covered` messages (seq order) it was not given put in place as summarized. The engine's
    are few (the messages after the summary, the pinned one): each finds its place by
    bisection in the covered ones, which are many and are built once."""
    items = [ExplainItem(id=e.id, seq=e.seq, status=e.status, tokens=e.tokens) for e in entries]
    if not covered:
        return items
    seen = {e.id for e in entries}
    merged = [
        ExplainItem(id=c.id, seq=c.seq, status="summarized", tokens=c.tokens)
        for c in covered
        if c.id not in seen
    ]
    stored = [item for item in items if item["seq"]]
    for item in reversed(stored):  # the newest first: most go at the end
        merged.insert(bisect.bisect(merged, item["seq"], key=lambda i: i["seq"]), item)
    return [item for item in items if not item["seq"]] + merged


def context_response(served: Served, options: ContextOptions) -> ContextResponse:
    """The GET …/context body (docs/reference.md §Routes) of one served context. A dry run's
    `summarized` says that the next request folds and this body shows the result."""
    result, snapshot, dry_run = served.result, served.snapshot, served.dry_run
    response = ContextResponse(
        session_id=snapshot.external_id,
        model=served.model,
        format=options.format,
        system=result.system,
        messages=result.messages,
        tools=result.tools,
        summary=snapshot.summary_read,
        usage=usage_block(
            result.usage,
            calibration_read(served.family, snapshot.calibration),
            served.cache,
        ),
        messages_included=result.messages_included,
        messages_total=snapshot.messages_total,
        summarized=served.fold is not None or dry_run.fold == "computed",
        warnings=list(result.warnings),
    )
    if options.explain:
        response.explain = explain_items(result.explain, snapshot.covered)
    if options.dry_run:
        response.dry_run = DryRunRead(**dataclasses.asdict(dry_run))
    return response
