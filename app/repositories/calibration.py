"""Calibration rows: one smoothed ratio per tenant and model family."""

from __future__ import annotations

from sqlalchemy import select
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.ext.asyncio import AsyncSession

from app.engine.calibration import Calibration as CalibrationValue
from app.models import Calibration


class CalibrationRepository:
    def __init__(self, db: AsyncSession, tenant: str) -> None:
        self.db = db
        self.tenant = tenant

    async def get(self, family: str) -> CalibrationValue | None:
        stmt = select(Calibration).where(
            Calibration.tenant == self.tenant, Calibration.family == family
        )
        row = (await self.db.execute(stmt)).scalar_one_or_none()
        if row is None:
            return None
        return CalibrationValue(family=row.family, ratio=row.ratio, samples=row.samples)

    async def lock(self, family: str) -> Calibration:
        """The family's row, created if missing, locked until commit (a read-modify-write
        of the EWMA must not lose a concurrent report)."""
        dialect = self.db.get_bind().dialect.name
        insert = postgresql.insert if dialect == "postgresql" else sqlite.insert
        await self.db.execute(
            insert(Calibration)
            .values(tenant=self.tenant, family=family, ratio=1.0, samples=0)
            .on_conflict_do_nothing()
        )
        stmt = (
            select(Calibration)
            .where(Calibration.tenant == self.tenant, Calibration.family == family)
            .with_for_update()
            .execution_options(populate_existing=True)
        )
        return (await self.db.execute(stmt)).scalar_one()
