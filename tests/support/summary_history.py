"""Waiting for a fold that runs beside the requests to land in the summary history."""

from __future__ import annotations

import asyncio
from typing import Any

import httpx


async def landed(client: httpx.AsyncClient, session_id: str = "s") -> dict[str, Any]:
    """The newest summary version once one exists (bounded: 250 polls of 20 ms)."""
    for _ in range(250):
        page = (await client.get(f"/sessions/{session_id}/summaries")).json()["summaries"]
        if page:
            return dict(page[0])
        await asyncio.sleep(0.02)
    raise AssertionError("the fold did not land")
