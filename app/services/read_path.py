"""The read path's resources: one set per app (per replica), opened with the database.

- `responses`: the context bodies this replica keeps (app/services/response_cache.py);
- `records`: the prompt-cache records of the contexts it served, per session and model
  (app/services/prompt_cache.py), read by `usage.cache` and by POST …/usage;
- `versions`: the one-statement read that says whether a kept body still holds
  (app/repositories/context_version.py);
- `snapshot`: a context's reads on those same driver connections
  (app/repositories/context_rows.py); None until the database is open, or where the driver
  has no such reads (the ORM path reads instead).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from sqlalchemy.ext.asyncio import AsyncEngine

from app.repositories.context_rows import DriverSnapshot, driver_snapshot
from app.repositories.context_version import (
    ContextVersionReader,
    NoDatabase,
    open_context_version_reader,
)
from app.services.prompt_cache import PromptRecords
from app.services.response_cache import ResponseCache


@dataclass
class ReadPath:
    responses: ResponseCache
    records: PromptRecords = field(default_factory=PromptRecords)
    versions: ContextVersionReader = field(default_factory=NoDatabase)
    snapshot: DriverSnapshot | None = None

    def open(self, engine: AsyncEngine) -> None:
        """Open the driver's own connections on `engine`'s database (at startup)."""
        self.versions = open_context_version_reader(engine)
        self.snapshot = driver_snapshot(self.versions)

    async def close(self) -> None:
        await self.versions.close()


__all__ = ["ReadPath"]
