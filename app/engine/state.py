"""What `assemble` is asked for (`AssemblyInput`) and what it would send so far (`State`).

Every tier (app/engine/prune.py, folds.py, fit.py) reads and changes one `State`; its running
total is the estimate held to the limit.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from app.core.context_settings import ContextSettings
from app.engine.budget import MESSAGE_OVERHEAD_TOKENS
from app.engine.render import CONTINUATION_TEXT, Format, summary_pair, summary_section
from app.engine.types import Message
from app.engine.units import Unit
from app.tokens.base import TokenCounter

# What a request may ask for (`summarize=`).
Mode = Literal["auto", "never", "force"]
# ahead: as auto, and plan the fold the budget will soon need even while the context fits
# (folds ahead of need, app/services/background_folds.py).
PlanMode = Literal["auto", "never", "force", "ahead"]
Status = Literal["included", "pruned", "truncated", "summarized", "dropped", "compacted"]


@dataclass(frozen=True, slots=True)
class AssemblyInput:
    messages: Sequence[Message]
    """Messages after the clear marker: at least the pinned first user message and all after
    `summary_through_seq` (what GET …/context loads); covered ones too when explaining."""
    context_window: int
    settings: ContextSettings = field(default_factory=ContextSettings)
    system_prompt: str | None = None
    tools: Sequence[Mapping[str, Any]] | None = None
    summary: str | None = None
    summary_through_seq: int = 0
    max_tokens: int | None = None
    format: Format = "anthropic"
    mode: PlanMode = "auto"
    calibration_ratio: float = 1.0
    prune_anchor_seq: int | None = None
    """The newest seq when the first context after the last fold was served: the older
    eligible messages up to it are pruned at once (that request broke the cache anyway)."""


@dataclass(frozen=True, slots=True)
class Handed:
    """What the newest-window cut (app/engine/newest.py) did to a posted history before
    handing it to `assemble`; a whole history is handed as `WHOLE`."""

    stand_ins: frozenset[str] = frozenset()
    """Ids of messages whose `tokens` is a stand-in, not their count (old history left
    uncounted): never pruned; newest.py checks they end up dropped."""
    left_out_units: int = 0
    """Units older than the messages handed over, left out already: counted in the drop
    warning."""


WHOLE = Handed()


@dataclass(slots=True)
class State:
    """What would be sent; `total()` is the estimate held to `limit`."""

    request: AssemblyInput
    counter: TokenCounter
    fixed: int
    units: list[Unit]
    pinned: Message | None
    summary: str | None
    handed: Handed = WHOLE
    folds: bool = True
    """False when the context starts at a compaction Foldwise cannot read (compaction.py)."""
    status: dict[str, Status] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)
    _summary_cost: tuple[str | None, int] = (None, 0)
    # Sum of the stored tokens of what would be sent, kept up to date by every mutation below
    # (recomputing it per loop step made pruning and dropping quadratic: 600 ms for 1k messages).
    _message_sum: int | None = None

    def sent(self) -> list[Message]:
        messages = [m for unit in self.units for m in unit.messages]
        return sorted([self.pinned, *messages] if self.pinned else messages, key=lambda m: m.seq)

    def summary_tokens(self) -> int:
        if not self.summary:
            return 0
        if self._summary_cost[0] != self.summary:  # counted once per text, not per loop step
            self._summary_cost = (self.summary, self._count_summary(self.summary))
        return self._summary_cost[1]

    def _count_summary(self, summary: str) -> int:
        if self.request.settings.summary_placement == "system":
            return self.counter.count_text(summary_section(self.request.system_prompt, summary))
        pair = summary_pair(summary)
        return sum(self.counter.count_content(t) for t in pair) + 2 * MESSAGE_OVERHEAD_TOKENS

    def _first_sent(self) -> Message | None:
        # Units are contiguous seq spans in order, so the first unit starts the history.
        first = self.units[0].messages[0] if self.units else None
        if self.pinned is not None and (first is None or self.pinned.seq < first.seq):
            return self.pinned
        return first

    def message_tokens(self) -> int:
        if self._message_sum is None:
            self._message_sum = sum(u.tokens for u in self.units) + (
                self.pinned.tokens if self.pinned else 0
            )
        tokens = self._message_sum
        first = self._first_sent()
        pair_first = self.summary and self.request.settings.summary_placement == "messages"
        if (
            self.request.format == "anthropic"
            and first is not None
            and first.role == "assistant"
            and not pair_first
        ):
            tokens += self.counter.count_content(CONTINUATION_TEXT) + MESSAGE_OVERHEAD_TOKENS
        return tokens

    def total(self) -> int:
        return self.fixed + self.summary_tokens() + self.message_tokens()

    def replace(self, old: Message, new: Message, status: Status) -> None:
        self.status[old.id] = status
        if self.pinned is not None and self.pinned.id == old.id:
            self._adjust(self.pinned.tokens, new.tokens)
            self.pinned = new
            return
        for index, unit in enumerate(self.units):
            current = next((m for m in unit.messages if m.id == old.id), None)
            if current is not None:
                self._adjust(current.tokens, new.tokens)
                messages = tuple(new if m.id == old.id else m for m in unit.messages)
                self.units[index] = Unit(messages, unit.pending)
                return

    def replace_many(self, new: dict[str, Message], status: Status) -> None:
        """`replace` for many unit messages at once (id → new message): one pass, not n."""
        for index, unit in enumerate(self.units):
            if any(m.id in new for m in unit.messages):
                for message in unit.messages:
                    if message.id in new:
                        self.status[message.id] = status
                        self._adjust(message.tokens, new[message.id].tokens)
                messages = tuple(new.get(m.id, m) for m in unit.messages)
                self.units[index] = Unit(messages, unit.pending)

    def _adjust(self, removed: int, added: int) -> None:
        if self._message_sum is not None:
            self._message_sum += added - removed

    def drop_unit(self, index: int) -> None:
        for message in self.units[index].messages:
            self.status[message.id] = "dropped"
        self._adjust(self.units[index].tokens, 0)
        del self.units[index]

    def drop_pinned(self) -> None:
        if self.pinned is not None:
            self.status[self.pinned.id] = "dropped"
            self.pinned, self._message_sum = None, None

    def keep_only(self, message: Message) -> None:
        self.units, self.pinned, self._message_sum = [], message, None
