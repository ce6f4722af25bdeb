"""`Context`: what `context()` and `assemble_context()` return, with the keyword arguments of
the providers' SDK calls ready to unpack."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, cast

from foldwise_client.types import (
    AppendResult,
    ContextUsage,
    DryRun,
    ExplainItem,
    Format,
    SummaryState,
)


class FormatMismatchError(ValueError):
    """A `*_kwargs()` method called on a context fetched in another format."""


@dataclass(frozen=True)
class Context:
    """The history to send next, under the budget (docs/reference.md §Assembly).

    `system`, `messages` and `tools` are in the shape of `format`; `raw` is the whole
    response body. `pruned` / `dropped` are set by `assemble_context` only (indexes into the
    posted messages); `session_id` is None there.
    """

    model: str
    format: Format
    system: str | list[dict[str, Any]] | None
    messages: list[dict[str, Any]]
    tools: list[dict[str, Any]] | None
    usage: ContextUsage
    messages_included: int
    messages_total: int
    warnings: list[str]
    session_id: str | None = None
    summary: SummaryState | None = None
    summarized: bool = False
    explain: list[ExplainItem] | None = None
    dry_run: DryRun | None = None
    """With `dry_run=True`: whether the request folds, and if the body shows the fold."""
    pruned: list[int] = field(default_factory=list)
    dropped: list[int] = field(default_factory=list)
    raw: dict[str, Any] = field(default_factory=dict, repr=False)

    @classmethod
    def from_json(cls, body: dict[str, Any]) -> Context:
        return cls(
            model=body["model"],
            format=body["format"],
            system=body.get("system"),
            messages=body["messages"],
            tools=body.get("tools"),
            usage=cast(ContextUsage, body["usage"]),
            messages_included=body["messages_included"],
            messages_total=body["messages_total"],
            warnings=body.get("warnings", []),
            session_id=body.get("session_id"),
            summary=body.get("summary"),
            summarized=body.get("summarized", False),
            explain=body.get("explain"),
            dry_run=body.get("dry_run"),
            pruned=body.get("pruned", []),
            dropped=body.get("dropped", []),
            raw=body,
        )

    def _expect(self, wanted: Format, method: str) -> None:
        if self.format != wanted:
            raise FormatMismatchError(
                f"{method}() needs a context fetched with format={wanted!r}, "
                f"this one is {self.format!r}"
            )

    def anthropic_kwargs(
        self, max_tokens: int | None = None, *, model: str | None = None
    ) -> dict[str, Any]:
        """For `anthropic.Anthropic().messages.create(**ctx.anthropic_kwargs())`.

        `max_tokens` defaults to the output the budget reserved (`usage.reserved_output_tokens`);
        `model` to the context's model. `system` and `tools` are left out when empty.
        """
        self._expect("anthropic", "anthropic_kwargs")
        limit = max_tokens if max_tokens is not None else self.usage.get("reserved_output_tokens")
        if not limit:
            raise ValueError("no output reserved (reserved_output_tokens=0): pass max_tokens")
        kwargs: dict[str, Any] = {
            "model": model or self.model,
            "max_tokens": limit,
            "messages": self.messages,
        }
        if self.system:
            kwargs["system"] = self.system
        if self.tools:
            kwargs["tools"] = self.tools
        return kwargs

    def openai_kwargs(self, *, model: str | None = None) -> dict[str, Any]:
        """For `openai.OpenAI().chat.completions.create(**ctx.openai_kwargs())`: the system
        prompt (and a summary placed there) is the first of `messages`."""
        self._expect("openai", "openai_kwargs")
        kwargs: dict[str, Any] = {"model": model or self.model, "messages": self.messages}
        if self.tools:
            kwargs["tools"] = self.tools
        return kwargs

    def openai_responses_kwargs(self, *, model: str | None = None) -> dict[str, Any]:
        """For `openai.OpenAI().responses.create(**ctx.openai_responses_kwargs())`:
        `instructions` (system prompt + summary), `input` (Responses items), `tools`."""
        self._expect("openai_responses", "openai_responses_kwargs")
        kwargs: dict[str, Any] = {"model": model or self.model, "input": self.messages}
        if self.system:
            kwargs["instructions"] = self.system
        if self.tools:
            kwargs["tools"] = self.tools
        return kwargs

    def gemini_kwargs(self, *, model: str | None = None) -> dict[str, Any]:
        """For `google.genai.Client().models.generate_content(**ctx.gemini_kwargs())`:
        `contents`, and a `config` with `system_instruction` (system prompt + summary) and
        `tools` when there are any."""
        self._expect("gemini", "gemini_kwargs")
        config: dict[str, Any] = {}
        if self.system:
            config["system_instruction"] = self.system
        if self.tools:
            config["tools"] = self.tools
        kwargs: dict[str, Any] = {"model": model or self.model, "contents": self.messages}
        if config:
            kwargs["config"] = config
        return kwargs


@dataclass(frozen=True)
class Turn:
    """What `turn()` returns: `append` as `append_messages` returns it, and `context` as
    `context()` would right after."""

    append: AppendResult
    context: Context

    @classmethod
    def from_json(cls, body: dict[str, Any]) -> Turn:
        return cls(
            append=cast(AppendResult, body["append"]), context=Context.from_json(body["context"])
        )
