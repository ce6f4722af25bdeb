// The budget: the bar of the context's parts to scale with the fold threshold marked, and the
// budget's slider and number box, which always show the same value.
import { fmt, h, pct } from "./dom.js";

export function budgetBar(usage) {
  // To scale: the budget's parts, then the reserved output; the fold threshold marked on it.
  const window = usage.context_window;
  const used = usage.system_tokens + usage.tools_tokens + usage.summary_tokens + usage.message_tokens;
  const budget = Math.max(1, usage.budget);
  const free = Math.max(0, budget - used);
  const parts = [
    ["system", "System prompt", usage.system_tokens],
    ["tools", "Tools", usage.tools_tokens],
    ["summary", "Summary", usage.summary_tokens],
    ["messages", "Messages", usage.message_tokens],
    ["free", "Free in budget", free],
    ["reserved", "Reserved output", usage.reserved_output_tokens],
  ];
  const whole = budget + usage.reserved_output_tokens;
  const threshold = Math.floor(usage.threshold * window);
  const readout = h("p", { class: "readout", id: "bar-readout", "aria-live": "polite", text: "Hover or focus a part of the bar for its tokens." });
  const bar = h("div", {
    class: "bar",
    role: "group",
    "aria-label": `Budget of ${fmt(usage.budget)} tokens and ${fmt(usage.reserved_output_tokens)} reserved for output; the fold threshold at ${fmt(threshold)} tokens`,
  });
  for (const [cls, label, n] of parts) {
    if (n <= 0) continue;
    const text = `${label}: ${fmt(n)} tokens (${pct(n / whole)} of budget + reserved output)`;
    const seg = h("span", { class: `seg ${cls}`, role: "img", tabindex: "0", "aria-label": text, title: text, dataset: { part: cls, tokens: String(n) } });
    seg.style.flexGrow = String(n);
    const tell = () => (readout.textContent = text);
    seg.addEventListener("focus", tell);
    seg.addEventListener("mouseenter", tell);
    bar.append(seg);
  }
  bar.append(thresholdMark(threshold, usage.threshold, window, whole));
  const legend = h(
    "dl",
    { class: "legend", id: "usage-legend" },
    parts.map(([cls, label, n]) =>
      h("div", { dataset: { usage: cls } }, h("dt", {}, h("span", { class: `swatch ${cls}`, "aria-hidden": "true" }), label), h("dd", { text: fmt(n) })),
    ),
    h("div", { dataset: { usage: "total" } }, h("dt", { text: "Total sent" }), h("dd", { text: fmt(usage.total_tokens) })),
    h("div", { dataset: { usage: "budget" } }, h("dt", { text: "Budget" }), h("dd", { text: fmt(usage.budget) })),
    h("div", { dataset: { usage: "window" } }, h("dt", { text: "Window" }), h("dd", { text: fmt(window) })),
    h("div", { dataset: { usage: "threshold" } },
      h("dt", {}, h("span", { class: "swatch threshold", "aria-hidden": "true" }), `Threshold ${pct(usage.threshold)}`), h("dd", { text: fmt(threshold) })),
  );
  return h("div", { class: "bar-wrap" }, bar, readout, legend);
}

// Where a context folds, threshold × window tokens, on the bar's scale (budget + reserved
// output): its end for the default budget, inside it for a larger one, past it (drawn at
// the end) for a smaller one.
function thresholdMark(tokens, share, window, whole) {
  const beyond = tokens > whole ? " (past the end of this bar)" : "";
  const mark = h("div", {
    class: "mark threshold",
    "aria-hidden": "true",
    title: `Fold threshold: ${pct(share)} of the ${fmt(window)}-token window = ${fmt(tokens)} tokens${beyond}`,
    dataset: { tokens: String(tokens) },
  });
  mark.style.left = `${100 * Math.min(1, tokens / whole)}%`;
  return mark;
}

/**
 * The budget's slider and number box: the same bounds and step (one token), each following
 * the other as it moves; `onCommit(tokens)` when either is let go, `onReset()` for the default.
 */
export function budgetInput({ value, max, onCommit, onReset }) {
  const bounds = { min: "1", max: String(max), step: "1", value: String(value) };
  const said = (n) => `${fmt(Number(n))} tokens`;
  const slider = h("input", { id: "budget", type: "range", ...bounds, "aria-valuetext": said(value) });
  const number = h("input", { id: "budget-number", type: "number", ...bounds, "aria-label": "Budget in tokens" });
  const reset = h("button", { type: "button", id: "budget-reset", text: "Default budget", onclick: onReset });
  slider.addEventListener("input", () => {
    number.value = slider.value;
    slider.setAttribute("aria-valuetext", said(slider.value));
  });
  number.addEventListener("input", () => {
    if (!number.validity.valid || number.value === "") return;
    slider.value = number.value;
    slider.setAttribute("aria-valuetext", said(number.value));
  });
  slider.addEventListener("change", () => onCommit(Number(slider.value)));
  number.addEventListener("change", () => onCommit(Number(number.value)));
  return [slider, number, reset];
}
