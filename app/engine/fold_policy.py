"""When a context read folds, and how (SPEC §12): one pure decision per round of
`ContextAssembler.serve` (app/services/context.py), which only carries it out.

A round has assembled the context; `decide` looks at what that assembly asks for and at the
fold's state, and answers one action with its reason:

- `serve`: no fold is due (or the request already made its one fold, or `summarize=never`);
- `ahead`: serve now, and start in the background the fold the budget will soon need (the
  context is past `fold_ahead` × the budget, no fold of the session runs here);
- `fold`: fold now and wait for it (`summarize=force`, or no background runner);
- `join`: start the fold in the background (or join the running one) and wait for it at
  most `wait_s`; a fitted context is served if it has not landed by then;
- `compute`: a dry run folds in memory with the rule summarizer (nothing is stored);
- `skip`: a dry run never calls an external model: the fitted context is shown;
- `unlanded`: folds kept losing their race (rounds exhausted): serve the fitted context.

The waits and the soft trigger depend on whether the fold calls an LLM: a rule fold lands in
milliseconds, so a read over the budget waits up to RULE_FOLD_WAIT_S for it and folds start
at the budget; an LLM fold is never waited for and starts at LLM_FOLD_AHEAD × the budget, so
a few more turns fit while it writes. Settings override both.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from app.engine.state import Mode

Action = Literal["serve", "ahead", "fold", "join", "compute", "skip", "unlanded"]

# How long a read over the budget waits for a rule fold by default: a turn's span folds in
# milliseconds. A span over RULE_WAIT_SPAN_TOKENS (a transcript posted whole: seconds of
# folding) is not waited for: its first read is served fitted at once.
RULE_FOLD_WAIT_S = 0.25
RULE_WAIT_SPAN_TOKENS = 64_000
# Where an LLM fold starts by default: early enough that a few more turns' growth fits while
# the LLM writes. A rule fold starts at the budget (1.0): it lands within RULE_FOLD_WAIT_S,
# and starting earlier would only fold more often (each fold breaks the prompt cache).
LLM_FOLD_AHEAD = 0.9


@dataclass(frozen=True, slots=True)
class FoldPolicy:
    """The configured knobs (`FOLDWISE_FOLD_AHEAD`, `FOLDWISE_FOLD_HARD_WAIT_S`; None: the
    defaults above) and whether this session's fold would call an LLM."""

    calls_llm: bool
    fold_ahead: float | None = None
    hard_wait_s: float | None = None

    @property
    def ahead_share(self) -> float:
        """The share of the budget past which a fold starts."""
        if self.fold_ahead is not None:
            return self.fold_ahead
        return LLM_FOLD_AHEAD if self.calls_llm else 1.0

    def wait_s(self, span_tokens: int) -> float:
        """How long a read over the budget waits for the fold of `span_tokens`."""
        if self.hard_wait_s is not None:
            return self.hard_wait_s
        if self.calls_llm or span_tokens > RULE_WAIT_SPAN_TOKENS:
            return 0.0
        return RULE_FOLD_WAIT_S


@dataclass(frozen=True, slots=True)
class FoldState:
    """What one round knows: the request, its assembly and the session's fold."""

    mode: Mode
    dry_run: bool
    due: bool
    """The assembly asks for a fold of at least the smallest summary worth writing."""
    folded: bool
    """This request already folded (a request makes at most one fold)."""
    last_round: bool
    background: bool
    """Folds may run beside the requests (this replica has a runner)."""
    running: bool
    """A fold of this session runs in this process."""
    estimated_tokens: int
    limit: int
    """The budget in estimated tokens (calibration applied)."""
    span_tokens: int = 0
    """Stored tokens of the messages the due fold would summarize."""


@dataclass(frozen=True, slots=True)
class FoldDecision:
    action: Action
    reason: str
    wait_s: float = 0.0


def decide(state: FoldState, policy: FoldPolicy) -> FoldDecision:
    if state.mode == "never":
        return FoldDecision("serve", "summarize=never")
    if state.folded:
        return FoldDecision("serve", "this request folded already (one fold per request)")
    if not state.due:
        return _ahead_or_serve(state, policy)
    if state.dry_run:
        if policy.calls_llm:
            return FoldDecision("skip", "a dry run never calls an external model")
        return FoldDecision("compute", "a dry run folds in memory, storing nothing")
    if state.last_round:
        return FoldDecision("unlanded", "the fold lost its race in every round")
    if state.mode == "force":
        return FoldDecision("fold", "summarize=force folds now")
    if not state.background:
        return FoldDecision("fold", "no background runner: the request folds")
    wait = policy.wait_s(state.span_tokens)
    return FoldDecision("join", f"over the budget: wait up to {wait:g} s for the fold", wait)


def _ahead_or_serve(state: FoldState, policy: FoldPolicy) -> FoldDecision:
    share = policy.ahead_share
    if state.mode != "auto" or state.dry_run or share >= 1 or not state.background:
        return FoldDecision("serve", "within the budget")
    if state.running:
        return FoldDecision("serve", "within the budget; the session's fold is running")
    if state.estimated_tokens < share * state.limit:
        return FoldDecision("serve", f"under {share:g} × the budget")
    return FoldDecision("ahead", f"past {share:g} × the budget: fold in the background")
