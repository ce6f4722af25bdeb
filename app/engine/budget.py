"""Budgets and usage: how many tokens a context may spend, and how they were spent.

docs/reference.md §Assembly, the tiers `assemble` applies in order:

1. Everything after the summary (or the clear marker) fits → sent verbatim, no summarizer call.
2. Doesn't fit → prune bulky content of older messages (tool results, file bodies) to a marked
   excerpt; the last `keep_recent` messages and the pinned first message stay untouched. With
   hysteresis (down to `prune_target × budget`, see prune.prune_history), so the next turns
   only append; a prune that cannot get as low as a fold would makes way for a fold.
3. Still doesn't fit → fold the oldest unsummarized units into the summary, down to
   `fold_target × budget` (hysteresis), lower at a tight budget so the fold leaves room for
   folds.RUNWAY_MESSAGES more messages; with `summarize=never` the oldest units are dropped.
4. A single message larger than what is left is truncated with a visible marker. The result is
   never over budget; system prompt + tools alone over budget → 422 `budget_too_small`.

Budget = `max_tokens` if given, else `floor(threshold × context_window) − reserved_output_tokens`.
The calibrated total (`ceil(estimated × ratio)`, docs/reference.md §Calibration) is the number
held to the budget.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from app.core.context_settings import ContextSettings

# A message the engine adds itself (summary pair, "(conversation continues)") costs its text
# plus framing: 3 tokens per message in the OpenAI cookbook + about 1 for the role.
MESSAGE_OVERHEAD_TOKENS = 4
# A summary may take at most a quarter of the budget, so three quarters stay for the
# conversation itself; a longer summary is cut for that response only (docs/reference.md §Assembly).
SUMMARY_SHARE_OF_BUDGET = 0.25


@dataclass(frozen=True, slots=True)
class Budget:
    context_window: int
    threshold: float
    reserved_output_tokens: int
    tokens: int
    """What the calibrated total may reach."""


def compute_budget(
    context_window: int, settings: ContextSettings, max_tokens: int | None
) -> Budget:
    """`max_tokens` if given, else floor(threshold × window) − reserved output (never below 0).

    A `max_tokens` above the model's window is the window (docs/reference.md §Operations): nothing
    larger can be sent
    (a window of 0 is "not known", as in engine tests: then `max_tokens` stands alone).
    """
    if max_tokens is not None:
        tokens = min(max_tokens, context_window) if context_window > 0 else max_tokens
    else:
        tokens = math.floor(settings.threshold * context_window) - settings.reserved_output_tokens
    return Budget(
        context_window=context_window,
        threshold=settings.threshold,
        reserved_output_tokens=settings.reserved_output_tokens,
        tokens=max(0, tokens),
    )


def calibrated(estimated: int, ratio: float) -> int:
    """The provider-scale count of an estimate: ceil(estimated × ratio)."""
    return math.ceil(estimated * ratio)


def estimate_limit(budget_tokens: int, ratio: float) -> int:
    """The largest raw estimate whose calibrated value still fits `budget_tokens`."""
    if ratio <= 0:  # calibration clamps to [0.5, 2.0]; a nonsense ratio means no scaling
        return budget_tokens
    limit = math.floor(budget_tokens / ratio)
    # Float rounding can put floor(budget / ratio) one or two off either way: settle exactly,
    # in a bounded number of steps (a huge budget is off by more than rounding can fix).
    for _ in range(4):
        if limit > 0 and calibrated(limit, ratio) > budget_tokens:
            limit -= 1
        elif calibrated(limit + 1, ratio) <= budget_tokens:
            limit += 1
    while limit > 0 and calibrated(limit, ratio) > budget_tokens:  # never over: shrink fast
        limit -= max(1, (calibrated(limit, ratio) - budget_tokens) // 2)
    return max(0, limit)


def summary_share(limit: int, settings: ContextSettings) -> int:
    """Tokens a summary may take: max_summary_tokens, capped to SUMMARY_SHARE_OF_BUDGET."""
    return min(settings.max_summary_tokens, math.floor(limit * SUMMARY_SHARE_OF_BUDGET))


@dataclass(frozen=True, slots=True)
class UsageCounts:
    """The counts of the `usage` block (docs/reference.md §Routes), declared once: the engine's
    `Usage` and the response's `ContextUsage` (app/schemas/context.py) both extend it. A
    `description` in a field's metadata is the response field's description."""

    context_window: int
    threshold: float
    reserved_output_tokens: int
    budget: int
    system_tokens: int
    tools_tokens: int
    summary_tokens: int
    message_tokens: int
    media_tokens: int = field(
        metadata={
            "description": "Of `message_tokens`, the images, documents and audio sent, as "
            "their provider bills them (docs/media-counting.md)."
        }
    )
    estimated_tokens: int = field(metadata={"description": "Our raw estimate of what is sent."})
    total_tokens: int = field(
        metadata={"description": "The estimate × calibration ratio; ≤ budget."}
    )


@dataclass(frozen=True, slots=True)
class Usage(UsageCounts):
    """The engine's usage: the counts and the calibration ratio `total_tokens` was scaled by."""

    calibration_ratio: float
