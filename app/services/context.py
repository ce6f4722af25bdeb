"""ContextAssembler: load → assemble → fold → re-assemble → record, for GET …/context and
POST …/summarize.

The reads are app/services/context_load.py's (`SnapshotLoader`, `Snapshot`); when to fold is
app/engine/fold_policy.py's `decide`; this module acts on the decision and records what it
served.

No transaction is held across the summarizer: each read and write is its own short unit of
work on `app.state.sessionmaker`, and the fold itself is coordinated by `FoldCoordinator`
(lease + compare-and-swap). A bounded number of rounds (load, assemble, fold) runs; if the
context still wants a fold after them, the engine's fitted result (oldest units dropped,
never over budget) is served.
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
from dataclasses import dataclass
from typing import Any, Literal

from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from app.core.db import session_scope
from app.core.errors import UnknownModel
from app.core.logging import get_logger, log_event
from app.core.settings import Settings
from app.core.tracing import span
from app.engine.assemble import AssemblyInput, AssemblyResult, Mode, assemble
from app.engine.budget import estimate_limit, summary_share
from app.engine.fold_policy import FoldDecision, FoldState, decide
from app.engine.state import PlanMode
from app.engine.units import first_user_message, media_recounted
from app.repositories.context import (
    ContextRepository,
)
from app.repositories.context_rows import (
    DriverSnapshot,
)
from app.schemas.context import CacheUsage
from app.services.background_folds import BackgroundFolds, fold_policy
from app.services.context_load import ContextOptions, Snapshot, SnapshotLoader
from app.services.fold_prefix import with_prefix
from app.services.folds import FoldCoordinator, FoldJob, FoldOutcome, SummarizerFactory
from app.services.prompt_cache import (
    PromptRecords,
    compare,
    extends,
    previous_anchor,
    served_record,
    settings_fingerprint,
)
from app.summarizers.factory import resolve_strategy
from app.tokens.counter import counter_for
from app.tokens.registry import ModelInfo, ModelRegistry

log = get_logger("foldwise.context")

# Load → assemble → fold rounds per request: one fold (at most: version + 1), plus one re-read
# after losing a race; a third plan is served as the engine's fitted fallback instead.
MAX_FOLD_ROUNDS = 3
FOLD_BUSY = (
    "another request is folding this session: served the fitted context (oldest units left "
    "out) instead of waiting longer"
)
FOLD_UNLANDED = (
    "the fold this context needs did not land in this request: served the fitted context "
    "(oldest units left out)"
)
FOLD_PENDING = (
    "a fold of this session is running: served the fitted context (oldest units left out) "
    "until its summary lands"
)
# The smallest summary worth asking a summarizer for; tinier budgets get the fitted fallback.
MIN_SUMMARY_TOKENS = 16
# A context assembled on the event loop (`_small`): its work, linear in messages and tokens,
# stays within a few ms even when every token must be counted again (~0.2 µs a token).
INLINE_MAX_MESSAGES = 64
INLINE_MAX_TOKENS = 16_000


@dataclass(frozen=True, slots=True)
class Served:
    """One served context: the final snapshot and assembly, and what this call folded."""

    snapshot: Snapshot
    result: AssemblyResult
    model: str
    family: str
    fold: FoldOutcome | None
    folded_messages: int
    cache: CacheUsage
    record: dict[str, Any]
    """This context's record (app/services/prompt_cache.py)."""
    stored: Any
    """`last_context[model]` as the database holds it after this call: `record` when its
    shape changed, else the record it extends."""
    settled: bool
    """No fold left to make: the same request again serves this context, unfolded."""
    dry_run: DryRunFold
    """With `dry_run`: the fold the next request makes, and whether this context shows it."""


@dataclass(frozen=True, slots=True)
class DryRunFold:
    """What a dry run did about the fold the request would make: `none` (no fold is due),
    `computed` (folded in memory: the context shown is the one after it) or `skipped` (the
    summarizer is an external model, never called by a dry run: the context shown is the
    fitted one, from before the fold)."""

    fold: Literal["none", "computed", "skipped"]
    messages_folded: int = 0
    strategy: str | None = None


def _small(snapshot: Snapshot) -> bool:
    """Whether the engine's work on `snapshot` is bounded by the INLINE_MAX_* constants: the
    stored tokens of the messages and summary, and the system prompt and tools counted a
    token a character (an upper bound for text the counter has not seen)."""
    if len(snapshot.messages) > INLINE_MAX_MESSAGES:
        return False
    tokens = snapshot.summary.tokens + sum(m.tokens for m in snapshot.messages)
    tokens += len(snapshot.system_prompt or "")
    tokens += len(json.dumps(snapshot.tools)) if snapshot.tools else 0
    return tokens <= INLINE_MAX_TOKENS


def _stored_tokens(snapshot: Snapshot, result: AssemblyResult) -> int:
    """The context's size before pruning or folding: system prompt, tools, the summary and
    every live message at its stored count."""
    live = sum(m.tokens for m in snapshot.messages if m.seq > snapshot.summary.through_seq)
    usage = result.usage
    return usage.system_tokens + usage.tools_tokens + snapshot.summary.tokens + live


def _prune_anchor(snapshot: Snapshot, recorded: Any) -> int | None:
    """Where pruning is anchored (prune.py): the previous context's anchor for this summary,
    else, for the first context after a fold, its newest seq."""
    anchor = previous_anchor(recorded, snapshot.summary.version)
    if anchor is None and snapshot.summary.text and snapshot.messages:
        anchor = max(m.seq for m in snapshot.messages)
    return anchor


def _warned(result: AssemblyResult, warning: str) -> AssemblyResult:
    return dataclasses.replace(result, warnings=(*result.warnings, warning))


class ContextAssembler:
    def __init__(
        self,
        sessionmaker: async_sessionmaker[AsyncSession],
        tenant: str,
        settings: Settings,
        registry: ModelRegistry,
        summarizer_factory: SummarizerFactory,
        driver_snapshot: DriverSnapshot | None = None,
        records: PromptRecords | None = None,
        background: BackgroundFolds | None = None,
    ) -> None:
        """`driver_snapshot` (app/repositories/context_rows.py), when given, reads a context
        through the database driver; otherwise, and for long reads, SQLAlchemy does.
        `records` holds the records this replica served (app/services/prompt_cache.py).
        With `background` (app/services/background_folds.py), folds that `summarize=auto`
        asks for run beside the requests; without it, in them."""
        self.background = background
        self.loader = SnapshotLoader(sessionmaker, tenant, settings, registry, driver_snapshot)
        self.records = records if records is not None else PromptRecords()
        self.sessionmaker = sessionmaker
        self.tenant = tenant
        self.settings = settings
        self.registry = registry
        self.summarizer_factory = summarizer_factory

    async def serve(
        self, session_id: str, options: ContextOptions, base: Snapshot | None = None
    ) -> Served:
        """The context for `session_id`, folding first when the budget requires it. `base`, a
        snapshot a context of the same query was assembled from, spares reading again the
        messages it holds when the session only had appends since.

        Each round loads, assembles, and carries out what `fold_policy.decide` says; the last
        assembly is served and recorded."""
        mode, fold, folded, dry_run = options.mode, None, 0, DryRunFold("none")
        in_memory: Snapshot | None = None
        for round_number in range(1, MAX_FOLD_ROUNDS + 1):
            snapshot = in_memory or await self.loader.load(session_id, options, base)
            base = snapshot
            info = self.registry.get(options.model or snapshot.session_model)
            recorded = snapshot.last_served.get(options.model or snapshot.session_model)
            anchor = _prune_anchor(snapshot, recorded)
            result = await self._assembled(snapshot, info, options, mode, anchor)
            job = None if fold else self._fold_job(snapshot, result, options, mode)
            last = round_number == MAX_FOLD_ROUNDS
            state = self._fold_state(snapshot, result, options, mode, job, fold is not None, last)
            chosen = snapshot.context_settings
            decision = decide(state, fold_policy(self.settings, chosen.strategy, chosen.summarizer))
            if decision.action == "ahead":
                await self._fold_ahead(snapshot, info, options, anchor, result)
            if job is None or decision.action in ("serve", "ahead"):
                break
            if decision.action in ("compute", "skip"):
                in_memory, dry_run = await self._fold_in_memory(snapshot, job, info, decision)
                mode = "auto" if mode == "force" else mode
                if in_memory is None:
                    break
                continue
            if decision.action == "unlanded":  # folds kept losing their race: say so
                result = _warned(result, FOLD_UNLANDED)
                break
            job = self._prefixed(job, snapshot, result, options, anchor)
            outcome = await self._fold(job, info, decision)
            if outcome is None or outcome.status == "busy":
                # Served fitted (already within the budget) until the summary lands.
                result = _warned(result, FOLD_BUSY if outcome else FOLD_PENDING)
                break
            if outcome.status == "folded":
                fold, folded = outcome, folded + len(job.messages)
                mode = "auto" if mode == "force" else mode  # force folds once, then serves
        if info.warning:  # a model of a known family, counted with the family's rules
            result = dataclasses.replace(result, warnings=(info.warning, *result.warnings))
        return await self._served(snapshot, result, options, info, anchor, fold, folded, dry_run)

    def _fold_state(
        self,
        snapshot: Snapshot,
        result: AssemblyResult,
        options: ContextOptions,
        mode: Mode,
        job: FoldJob | None,
        folded: bool,
        last_round: bool,
    ) -> FoldState:
        return FoldState(
            mode=mode,
            dry_run=options.dry_run,
            due=job is not None,
            folded=folded,
            last_round=last_round,
            background=self.background is not None,
            running=self.background is not None and self.background.running(snapshot.pk),
            estimated_tokens=result.usage.estimated_tokens,
            limit=estimate_limit(result.usage.budget, snapshot.ratio),
            span_tokens=sum(m.tokens for m in job.messages) if job else 0,
        )

    async def _fold(
        self, job: FoldJob, info: ModelInfo, decision: FoldDecision
    ) -> FoldOutcome | None:
        """`fold`: run `job` in this request; `join`: in the background, waiting for it at
        most `decision.wait_s` (None: still running)."""
        coordinator = self._coordinator(info)
        if decision.action == "fold" or self.background is None:
            return await coordinator.run(job)
        return await self.background.join(job, coordinator, decision.wait_s)

    async def _served(
        self,
        snapshot: Snapshot,
        result: AssemblyResult,
        options: ContextOptions,
        info: ModelInfo,
        anchor: int | None,
        fold: FoldOutcome | None,
        folded: int,
        dry_run: DryRunFold,
    ) -> Served:
        """The served context, its prompt-cache record compared with the previous one and
        written when its shape changed (a read after appends writes nothing)."""
        model = options.model or snapshot.session_model
        recorded = snapshot.last_served.get(model)
        record = self._record(snapshot, result, options, anchor)
        key = (self.tenant, snapshot.pk, model)
        cache = compare(
            self.records.previous(key, recorded), record, result, snapshot.summary.method
        )
        if cache.reason == "prune" or (cache.reason == "first" and result.pruned):
            log_event(
                log,
                "prune",
                session=snapshot.external_id,
                pruned=len(result.pruned),
                tokens_before=_stored_tokens(snapshot, result),
                tokens_after=result.usage.estimated_tokens,
                reason="over budget",
            )
        stored = recorded
        if options.record_served:
            if not extends(recorded, record):
                async with session_scope(self.sessionmaker) as db:
                    await ContextRepository(db).record_served(snapshot.pk, model, record)
                stored = record
            self.records.remember(key, record)
        return Served(
            snapshot=snapshot,
            result=result,
            model=model,
            family=info.family,
            fold=fold,
            folded_messages=folded,
            cache=cache,
            record=record,
            stored=stored,
            settled=self._fold_job(snapshot, result, options, options.mode) is None,
            dry_run=dry_run,
        )

    @staticmethod
    def _record(
        snapshot: Snapshot, result: AssemblyResult, options: ContextOptions, anchor: int | None
    ) -> dict[str, Any]:
        """The prompt-cache record of serving `result` (app/services/prompt_cache.py)."""
        fingerprint = settings_fingerprint(
            options.format, snapshot.context_settings, snapshot.system_prompt, snapshot.tools
        )
        return served_record(
            result,
            version=snapshot.summary.version,
            anchor=anchor,
            fingerprint=fingerprint,
            ratio=snapshot.ratio,
            through_seq=snapshot.version.last_seq,
        )

    def _prefixed(
        self,
        job: FoldJob,
        snapshot: Snapshot,
        served: AssemblyResult,
        options: ContextOptions,
        anchor: int | None,
    ) -> FoldJob:
        """`job` with the context this request serves as the prefix to fold on, when that
        context is in the provider's cache (app/services/fold_prefix.py)."""
        strategy = resolve_strategy(job.strategy, self.settings, job.summarizer)
        if not self.settings.summarizer_cached_prefix or strategy == "rule":
            return job
        model = options.model or snapshot.session_model
        key = (self.tenant, snapshot.pk, model)
        previous = self.records.previous(key, snapshot.last_served.get(model))
        record = self._record(snapshot, served, options, anchor)
        return with_prefix(
            job, served, fmt=options.format, model=model, previous=previous, record=record
        )

    async def _fold_in_memory(
        self, snapshot: Snapshot, job: FoldJob, info: ModelInfo, decision: FoldDecision
    ) -> tuple[Snapshot | None, DryRunFold]:
        """`snapshot` as it will be once `job` is folded, the summary computed and not stored;
        (None, skipped) when computing it would call an external model (`skip`)."""
        strategy = resolve_strategy(job.strategy, self.settings, job.summarizer)
        if decision.action == "skip":
            return None, DryRunFold("skipped", len(job.messages), strategy)
        result = await self._coordinator(info).summarize(job)
        summary = job.summary(result).state(snapshot.summary.version + 1)
        folded = dataclasses.replace(snapshot, summary=summary)
        return folded, DryRunFold("computed", len(job.messages), strategy)

    async def _assembled(
        self,
        snapshot: Snapshot,
        info: ModelInfo,
        options: ContextOptions,
        mode: PlanMode,
        anchor: int | None,
    ) -> AssemblyResult:
        """The engine's context for `snapshot`. Its CPU work (counting, pruning, truncating)
        runs in a thread: a heavy context must not stall /healthz and every other request. A
        small one runs on the loop, where it costs less than the hop to a thread and back."""
        counter = counter_for(info)
        messages = snapshot.messages
        if counter.media_rule.name != self._stored_media_rule(snapshot.session_model):
            messages = media_recounted(messages, counter)
        request = AssemblyInput(
            messages=messages,
            context_window=info.context_window,
            settings=snapshot.context_settings,
            system_prompt=snapshot.system_prompt,
            tools=snapshot.tools,
            summary=snapshot.summary.text,
            summary_through_seq=snapshot.summary.through_seq,
            max_tokens=options.max_tokens,
            format=options.format,
            mode=mode,
            calibration_ratio=snapshot.ratio,
            prune_anchor_seq=anchor,
        )
        with span(
            "foldwise.assemble", session=snapshot.external_id, mode=mode,
            messages=len(snapshot.messages), model=info.name,
        ) as record:  # fmt: skip
            if _small(snapshot):
                result = assemble(request, counter)
            else:
                result = await asyncio.to_thread(assemble, request, counter)
            usage = result.usage
            record(
                budget=usage.budget, total_tokens=usage.total_tokens,
                messages_included=result.messages_included, pruned=len(result.pruned),
                fold_planned=result.fold_plan is not None,
            )  # fmt: skip
            return result

    def _stored_media_rule(self, session_model: str) -> str:
        """The media rule the stored counts were made with (app/services/messages.py)."""
        try:
            return self.registry.get(session_model).media
        except UnknownModel:  # the registry changed since: appends count with the default
            return self.registry.get(self.settings.default_model).media

    async def _fold_ahead(
        self,
        snapshot: Snapshot,
        info: ModelInfo,
        options: ContextOptions,
        anchor: int | None,
        served: AssemblyResult,
    ) -> None:
        """Start the fold the budget will need soon, planned like one over the budget (down to
        `fold_target`); `served`, the context served without waiting for it, is its prefix."""
        planned = await self._assembled(snapshot, info, options, "ahead", anchor)
        job = self._fold_job(snapshot, planned, options, "ahead")
        if job is not None and self.background is not None:
            job = self._prefixed(job, snapshot, served, options, anchor)
            self.background.start(job, self._coordinator(info))

    def _coordinator(self, info: ModelInfo) -> FoldCoordinator:
        return FoldCoordinator(
            self.sessionmaker, self.settings, counter_for(info), self.summarizer_factory
        )

    @staticmethod
    def _fold_job(
        snapshot: Snapshot, result: AssemblyResult, options: ContextOptions, mode: PlanMode
    ) -> FoldJob | None:
        """The fold this assembly's plan asks for, or None. A summary over its share is only
        shortened for the response (by the engine): one request's budget never rewrites it."""
        if mode == "never":
            return None
        limit = estimate_limit(result.usage.budget, snapshot.ratio)
        share = summary_share(limit, snapshot.context_settings)
        if share < MIN_SUMMARY_TOKENS:
            return None
        plan = result.fold_plan
        if plan is None:
            return None
        live = [m for m in snapshot.messages if m.seq > snapshot.summary.through_seq]
        pinned = (
            first_user_message(snapshot.messages)
            if snapshot.context_settings.pin_first_message
            else None
        )
        return FoldJob(
            session_pk=snapshot.pk,
            session_id=snapshot.external_id,
            version=snapshot.summary.version,
            previous_summary=snapshot.summary.text,
            previous_tokens=snapshot.summary.tokens,
            previous_message_count=snapshot.summary.message_count,
            messages=plan.messages,
            through_id=plan.through_id,
            through_seq=plan.through_seq,
            trigger=options.trigger or plan.trigger,
            strategy=snapshot.context_settings.strategy,
            max_summary_tokens=share,
            tokens_before=_stored_tokens(snapshot, result),
            messages_before=len(live),
            focus=options.focus,
            task_pinned=pinned is not None and all(m.seq != pinned.seq for m in plan.messages),
            summarizer=snapshot.context_settings.summarizer,
        )


__all__ = ["ContextAssembler", "ContextOptions", "DryRunFold", "Served", "Snapshot"]
