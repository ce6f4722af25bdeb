"""`assemble` on random requests, where BudgetTooSmall is an answer only when the budget
really cannot hold the system prompt and the smallest user message (tests/engine)."""

from __future__ import annotations

from typing import Any

from app.core.errors import BudgetTooSmall
from app.engine.assemble import AssemblyInput, AssemblyResult, assemble
from app.engine.budget import compute_budget, estimate_limit
from app.engine.units import is_empty

# Room for the smallest truncated user message: marker text, one block, message framing.
SMALLEST_USER_MESSAGE = 64


def limit(request: AssemblyInput) -> int:
    """The estimated tokens the request's context may hold."""
    budget = compute_budget(request.context_window, request.settings, request.max_tokens)
    return estimate_limit(budget.tokens, request.calibration_ratio)


def assemble_or_too_small(request: AssemblyInput, counter: Any) -> AssemblyResult | None:
    """The assembled context, or None when BudgetTooSmall was right to be raised."""
    try:
        return assemble(request, counter)
    except BudgetTooSmall as error:
        fixed = counter.count_text(request.system_prompt or "") + (
            4 if request.format == "openai" else 0
        )
        room = limit(request) - fixed
        assert fixed > limit(request) or room < SMALLEST_USER_MESSAGE * 4 + uncuttable_tail(
            request
        ), error
        return None


def uncuttable_tail(request: AssemblyInput) -> int:
    """Tokens of the newest message with tool calls when no user turn follows it: calls are
    never cut, and once the units before it go (or are folded), tier 4 has no user turn left to
    send instead, so such a history may need more than the smallest user message's room."""
    for message in sorted(request.messages, key=lambda m: m.seq, reverse=True):
        if message.role == "user" and not message.result_ids and not is_empty(message):
            return 0
        if message.call_ids:
            return message.tokens
    return 0
