"""Folds that run beside the requests, so no turn waits for a summarizer (SPEC §12).

When a read starts or joins a fold, and how long it waits, is app/engine/fold_policy.py's
decision; this runs them. A fold started ahead of need is served at once; the summary takes
over in the first context read after it lands (a fold breaks the prompt cache anyway). A
read over the budget joins the running fold and waits for it at most until the policy's wait
after the fold started, then serves the fitted context (oldest units left out) with a
warning. One fold per session runs in a process; across processes the `FoldCoordinator`
lease keeps it exactly once.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import time
from dataclasses import dataclass
from typing import Any

from app.core.logging import get_logger
from app.core.settings import Settings
from app.core.tracing import current_links, span
from app.engine.fold_policy import FoldPolicy
from app.services.folds import FoldCoordinator, FoldJob, FoldOutcome
from app.summarizers.factory import resolve_strategy, unavailable

log = get_logger("foldwise.fold")


@dataclass(frozen=True, slots=True)
class _Running:
    task: asyncio.Task[FoldOutcome]
    started: float  # time.monotonic()


def fold_policy(
    settings: Settings, strategy: str | None, summarizer: str | None = None
) -> FoldPolicy:
    """The fold policy (app/engine/fold_policy.py) for a session's summarizer `strategy` and
    `summarizer` choice: the configured `fold_ahead` / `fold_hard_wait_s`, else the defaults
    for a fold that calls an LLM or one that does not."""
    calls_llm = (
        resolve_strategy(strategy, settings, summarizer) != "rule"
        and unavailable(settings, summarizer) is None
    )
    return FoldPolicy(calls_llm, settings.fold_ahead, settings.fold_hard_wait_s)


class BackgroundFolds:
    """The folds running in this process, by session pk; one per app (per replica)."""

    def __init__(self) -> None:
        self._running: dict[int, _Running] = {}

    def running(self, session_pk: int) -> bool:
        found = self._running.get(session_pk)
        return found is not None and not found.task.done()

    def start(self, job: FoldJob, coordinator: FoldCoordinator) -> tuple[_Running, bool]:
        """The session's running fold, or `job` started now (True)."""
        found = self._running.get(job.session_pk)
        if found is not None and not found.task.done():
            return found, False
        # A context of its own: the fold outlives the request that started it, and must not
        # stop at that request's deadline (app/core/deadline.py).
        # Its spans form a trace of their own, linked to the request's.
        fold = self._fold(job, coordinator, current_links())
        task = asyncio.create_task(fold, context=contextvars.Context())
        found = self._running[job.session_pk] = _Running(task, time.monotonic())
        task.add_done_callback(lambda _: self._forget(job.session_pk, task))
        return found, True

    async def join(
        self, job: FoldJob, coordinator: FoldCoordinator, wait_s: float
    ) -> FoldOutcome | None:
        """Start `job` (or join the session's running fold) and wait for it until `wait_s`
        after it started: its outcome (`waited` for a fold another request started), or None
        while it still runs."""
        running, mine = self.start(job, coordinator)
        left = running.started + wait_s - time.monotonic()
        if not running.task.done() and left > 0:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(asyncio.shield(running.task), left)
        if not running.task.done():
            return None
        outcome = running.task.result()
        return outcome if mine or outcome.status != "folded" else FoldOutcome("waited")

    async def close(self) -> None:
        """Cancel the running folds (each gives its lease back: app/services/folds.py)."""
        tasks = [running.task for running in self._running.values()]
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)

    @staticmethod
    async def _fold(job: FoldJob, coordinator: FoldCoordinator, links: list[Any]) -> FoldOutcome:
        try:
            with span("foldwise.background_fold", links=links, session=job.session_id):
                return await coordinator.run(job)
        except Exception as exc:  # the next read past the trigger plans and tries again
            log.warning(
                "background fold of session %s failed: %s", job.session_pk, type(exc).__name__
            )
            return FoldOutcome("lost")

    def _forget(self, session_pk: int, task: asyncio.Task[FoldOutcome]) -> None:
        found = self._running.get(session_pk)
        if found is not None and found.task is task:
            del self._running[session_pk]


__all__ = ["BackgroundFolds", "fold_policy"]
