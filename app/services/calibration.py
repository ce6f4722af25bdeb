"""POST …/usage: learn the provider's count against our estimate, per tenant and model family.

The report refers to the last context served for that session and model: the one this
replica served last when it extends the recorded one (`PromptRecords`), else the recorded
one (`last_context`, written by GET …/context whenever a context's shape changes), plus what
the report says the request carried beyond it (`unserved`, counted here). The ratio
is smoothed by `app.engine.calibration.with_report` (EWMA, clamped to [0.5, 2.0]) under a
row lock, so concurrent reports are all counted.
"""

from __future__ import annotations

import asyncio

from sqlalchemy.ext.asyncio import AsyncSession

from app.core.errors import Conflict
from app.engine.calibration import Calibration, with_report
from app.repositories.calibration import CalibrationRepository
from app.repositories.sessions import SessionRepository
from app.schemas.calibration import CalibrationRead, UsageReport, UsageReportResponse
from app.services.prompt_cache import PromptRecords
from app.services.tokens import count_posted
from app.tokens.counter import counter_for
from app.tokens.registry import ModelRegistry


class NoContextServed(Conflict, code="no_context_served"):
    pass


def calibration_read(family: str, calibration: Calibration | None) -> CalibrationRead:
    """The `usage.calibration` block; ratio 1.0 with 0 samples before the first report."""
    if calibration is None:
        return CalibrationRead(family=family, ratio=1.0, samples=0)
    return CalibrationRead(
        family=calibration.family, ratio=calibration.ratio, samples=calibration.samples
    )


async def report_usage(
    db: AsyncSession,
    tenant: str,
    registry: ModelRegistry,
    session_id: str,
    body: UsageReport,
    records: PromptRecords | None = None,
) -> UsageReportResponse:
    session = await SessionRepository(db, tenant).get_or_raise(session_id)
    model = body.model or session.model
    family = registry.get(model).family
    served = (session.last_context or {}).get(model)
    if records is not None:
        served = records.previous((tenant, session.pk, model), served)
    # {"estimated": …, …} (app/services/prompt_cache.py); a bare int in older rows.
    estimated = served.get("estimated") if isinstance(served, dict) else served
    if not isinstance(estimated, int):
        estimated = 0  # a request of nothing but unserved parts (a session's first turn)
    if body.unserved is not None:
        unserved = body.unserved
        counter = counter_for(registry.get(model))
        # CPU work off the loop: the unserved part may be a long input.
        counted = await asyncio.to_thread(
            count_posted,
            counter,
            text=unserved.system,
            messages=unserved.messages,
            tools=unserved.tools,
        )
        estimated += counted.tokens
    if estimated <= 0:
        raise NoContextServed(
            f"no context was served for model {model!r} in this session yet: "
            "GET /sessions/{id}/context first, then report what the provider counted",
            {"session_id": session_id, "model": model},
        )
    row = await CalibrationRepository(db, tenant).lock(family)
    current = Calibration(family=family, ratio=row.ratio, samples=row.samples)
    learned = with_report(current, family, estimated, body.input_tokens)
    row.ratio, row.samples = learned.ratio, learned.samples
    await db.flush()
    return UsageReportResponse(
        session_id=session_id,
        model=model,
        estimated_tokens=estimated,
        input_tokens=body.input_tokens,
        calibration=calibration_read(family, learned),
    )
