// The "next request" card: what the view shows (the next request, or a preview with other
// parameters), the fold note, the model, budget and format pickers, the budget bar, the counts.
import { budgetBar, budgetInput } from "./budget.js";
import { fmt, h } from "./dom.js";
import { changesCount } from "./marks.js";
import { foldNote } from "./panels.js";

const FORMATS = ["anthropic", "openai", "openai_responses", "gemini", "raw"];

/**
 * `state`: {model, maxTokens, format} shown; `custom`: whether it differs from the default
 * view; `models`: GET /models; `clearedCount`: messages before the clear marker; `changes`
 * and `baseline`: the preview's status changes against the default view; `foldButton`: the
 * action offered when the view cannot show a fold; `onChange(next)`: draw the view for `next`.
 */
export function usageCard({ ctx, state, custom, models, clearedCount, changes, baseline, foldButton, onChange }) {
  const next = (changes) => ({ ...state, focusId: document.activeElement && document.activeElement.id, ...changes });
  const modelSelect = h("select", { id: "model" }, models.models.map((m) => h("option", { value: m.name, text: `${m.name} (${fmt(m.context_window)})` })));
  if (!models.models.some((m) => m.name === state.model)) modelSelect.append(h("option", { value: state.model, text: state.model }));
  modelSelect.value = state.model;
  modelSelect.addEventListener("change", () => onChange(next({ model: modelSelect.value, maxTokens: null })));
  const formatSelect = h("select", { id: "format" }, FORMATS.map((f) => h("option", { value: f, text: f })));
  formatSelect.value = state.format;
  formatSelect.addEventListener("change", () => onChange(next({ format: formatSelect.value })));
  const info = models.models.find((m) => m.name === state.model) || { context_window: ctx.usage.context_window };
  const budget = budgetInput({
    value: ctx.usage.budget, // max_tokens as the server applies it (at most the window)
    max: Math.max(1024, info.context_window),
    onCommit: (tokens) => onChange(next({ maxTokens: tokens })),
    onReset: () => onChange({ format: state.format, focusId: "budget-reset" }),
  });
  const synthetic = (ctx.explain || []).filter((e) => e.status === "synthetic");
  return h(
    "section",
    { class: "card", "aria-labelledby": "window-title", id: "window" },
    h(
      "div",
      { class: "row spread" },
      h("h2", { id: "window-title", text: custom ? "Context for other parameters" : "The next request" }),
      h("span", {
        class: custom ? "badge preview" : "badge next",
        id: "mode",
        text: custom ? `what a request with ${state.maxTokens ? `max_tokens=${state.maxTokens}` : "the default budget"} for ${state.model} would send · nothing stored` : "exactly what the next request sends",
      }),
    ),
    foldNote(ctx, foldButton),
    h(
      "div",
      { class: "controls" },
      h("label", { for: "model", text: "Model" }),
      modelSelect,
      h("label", { for: "budget", text: "Budget (max_tokens)" }),
      ...budget,
      h("label", { for: "format", text: "Format" }),
      formatSelect,
    ),
    budgetBar(ctx.usage),
    h(
      "p",
      { class: "muted", id: "counts" },
      `${fmt(ctx.messages_included)} messages sent of ${fmt(ctx.messages_total)} ${clearedCount ? "after the clear marker" : "stored"}` +
        (synthetic.length ? ` · added by Foldwise: ${synthetic.map((e) => e.id).join(", ")}` : ""),
      changesCount(changes, baseline),
    ),
    ctx.warnings.length ? h("ul", { class: "warnings" }, ctx.warnings.map((w) => h("li", { text: w }))) : null,
  );
}
