// The panels of the session view: the prompt cache, the fold note, the summary, the provider
// request, the summary history, and the tabs that hold the list and the request.
import { fmt, h, when } from "./dom.js";
import { lineDiff } from "./diff.js";
import { breakpoints, providerUrl, requestBody, snippet } from "./request.js";

const CACHE_REASONS = {
  none: "the previous context is a prefix of this one: the provider's prompt cache can read it",
  first: "no previous context was served for this session and model",
  fold: "a fold rewrote the summary, so the context changes after the system prompt",
  clear: "the context was cleared",
  prune: "an older message is now sent as an excerpt",
  budget: "a different budget dropped or truncated earlier messages",
  settings: "different settings (placement, pinning, breakpoints) changed the start",
};

export function cacheView(ctx, edge) {
  const cache = ctx.usage.cache;
  if (!cache) return null;
  return h(
    "section",
    { class: "card", "aria-labelledby": "cache-title", id: "cache" },
    h("h2", { id: "cache-title", text: "Prompt cache" }),
    h(
      "p",
      {},
      h("strong", { text: `${fmt(cache.prefix_tokens)} tokens` }),
      ` shared with the last context served for ${ctx.model}`,
      edge ? ` (through ${edge.label})` : "",
      " · reason ",
      h("code", { id: "cache-reason", text: cache.reason }),
      `: ${CACHE_REASONS[cache.reason] || cache.reason}. Breakpoints placed: ${cache.breakpoints}.`,
    ),
  );
}

export function summaryView(ctx) {
  const summary = ctx.summary;
  if (!summary || summary.text === null) return null;
  const computed = ctx.dry_run?.fold === "computed" ? ": computed for the next request, not stored yet" : "";
  return h(
    "section",
    { class: "card", "aria-labelledby": "summary-title", id: "summary" },
    h("h2", { id: "summary-title", text: `Summary v${summary.version} (${summary.method})${computed}` }),
    h("p", { class: "muted", text: `Covers ${fmt(summary.message_count)} messages through #${summary.through_seq}; ${fmt(summary.tokens)} tokens.` }),
    h("details", {}, h("summary", { text: "Summary text" }), h("pre", { text: summary.text || "" })),
  );
}

/** What the fold's model call was billed for: full-price input, cache reads and writes, output. */
function usageView(s) {
  const u = s.usage;
  const how = u.prompt === "cached_prefix" ? "on the cached prefix" : u.prompt === "fresh" ? "fresh prompt" : "not asked";
  return h("span", {
    class: "usage", dataset: { prompt: u.prompt || "none" },
    title: `${s.model || "model"}: ${how}`,
    text: `${s.model || "model"} (${how}): in ${fmt(u.input_tokens)}, cache read ${fmt(u.cache_read_tokens)}, cache write ${fmt(u.cache_write_tokens)}, out ${fmt(u.output_tokens)}`,
  });
}

export function historyView(summaries) {
  const rows = summaries.map((s, i) => {
    const previous = summaries[i + 1];
    const stats = s.stats || {};
    const diff = lineDiff(previous ? previous.text : "", s.text || "");
    return h(
      "details",
      { class: "version", dataset: { version: String(s.version) } },
      h(
        "summary",
        {},
        h("strong", { text: `v${s.version}` }),
        h("span", { class: "badge", text: s.method }),
        stats.trigger ? h("span", { text: `trigger ${stats.trigger}` }) : null,
        h("span", { text: `${fmt(s.tokens)} tokens` }),
        stats.messages_before !== undefined ? h("span", { text: `messages ${fmt(stats.messages_before)} → ${fmt(stats.messages_after)}` }) : null,
        stats.tokens_before !== undefined ? h("span", { text: `context ${fmt(stats.tokens_before)} → ${fmt(stats.tokens_after)} tokens` }) : null,
        s.usage ? usageView(s) : null,
        h("span", { class: "muted", text: when(s.created_at) }),
      ),
      s.usage?.prompt_note ? h("p", { class: "muted", text: `Fresh prompt: ${s.usage.prompt_note}.` }) : null,
      h("p", { class: "muted", text: previous ? `Changes from v${previous.version}:` : "First version:" }),
      h("pre", { class: "diff" }, diff.map((d) => h("span", { class: d.op, text: `${d.op === "add" ? "+ " : d.op === "del" ? "- " : "  "}${d.text}\n` }))),
    );
  });
  return h(
    "section",
    { class: "card", "aria-labelledby": "history-title", id: "history" },
    h("h2", { id: "history-title", text: `Summary history (${summaries.length})` }),
    rows.length ? rows : h("p", { class: "muted", text: "No fold yet: every message after the clear marker is sent." }),
  );
}

export function foldNote(ctx, fold) {
  const dry = ctx.dry_run || { fold: "none" };
  if (dry.fold === "computed") {
    return h("p", { id: "fold-note", class: "fold-note", dataset: { fold: "computed" } },
      h("strong", { text: "This request folds. " }),
      `It folds ${fmt(dry.messages_folded)} messages into summary v${ctx.summary.version} (${dry.strategy}) before it sends: shown is the context after that fold, computed for this view and not stored.`);
  }
  if (dry.fold === "skipped") {
    return h("p", { id: "fold-note", class: "fold-note", dataset: { fold: "skipped" } },
      h("strong", { text: "This request folds. " }),
      `It folds ${fmt(dry.messages_folded)} messages with the ${dry.strategy} summarizer, which this view does not call: shown is the context before that fold, its oldest messages left out. `,
      fold);
  }
  return h("p", { id: "fold-note", class: "fold-note", dataset: { fold: "none" }, text: "No fold is due: this is the context as it will be sent." });
}

export function requestView(ctx) {
  const body = requestBody(ctx);
  if (!body) {
    return h("p", { class: "muted", id: "request-none", text: "The raw format is not a provider's request: choose anthropic, openai, openai_responses or gemini above." });
  }
  const code = h("pre", { class: "code", id: "request-code", tabindex: "0", "aria-label": "Request" });
  const status = h("span", { class: "muted", role: "status", id: "copy-status" });
  let kind = "json";
  const choose = (next) => {
    kind = next;
    code.textContent = snippet(kind, ctx.format, body, ctx.model);
    for (const b of buttons) b.setAttribute("aria-pressed", String(b.dataset.kind === kind));
  };
  const buttons = [["json", "JSON"], ["curl", "curl"], ["python", "Python"], ["typescript", "TypeScript"]].map(([k, label]) =>
    h("button", { type: "button", class: "chip", dataset: { kind: k }, "aria-pressed": "false", text: label, onclick: () => choose(k) }),
  );
  const copy = h("button", {
    type: "button",
    id: "copy-request",
    class: "primary",
    text: "Copy",
    onclick: async () => {
      try {
        await navigator.clipboard.writeText(code.textContent);
        status.textContent = `Copied as ${kind}.`;
      } catch {
        status.textContent = "The browser refused the clipboard: select the text instead.";
      }
    },
  });
  choose("json");
  return h(
    "div",
    {},
    h("p", { class: "muted", id: "request-summary", text: `POST ${providerUrl(ctx.format, ctx.model)} · ${fmt((body.messages ?? body.input ?? body.contents).length)} messages · ${breakpoints(body)} cache_control breakpoints` }),
    h("div", { class: "row", role: "group", "aria-label": "Show the request as" }, buttons, copy, status),
    code,
  );
}

export function tabs(panels) {
  const tablist = h("div", { class: "tabs", role: "tablist", "aria-label": "Session views" });
  const tabsEls = panels.map(([key, label], i) =>
    h("button", { type: "button", role: "tab", id: `tab-${key}`, "aria-controls": `panel-${key}`, "aria-selected": String(i === 0), tabindex: i === 0 ? "0" : "-1", text: label }),
  );
  const panelEls = panels.map(([key, , content], i) => h("section", { role: "tabpanel", id: `panel-${key}`, "aria-labelledby": `tab-${key}`, hidden: i !== 0 }, content));
  const select = (i) => {
    tabsEls.forEach((t, j) => {
      t.setAttribute("aria-selected", String(i === j));
      t.tabIndex = i === j ? 0 : -1;
      panelEls[j].hidden = i !== j;
    });
    tabsEls[i].focus();
  };
  tabsEls.forEach((t, i) => {
    t.addEventListener("click", () => select(i));
    t.addEventListener("keydown", (event) => {
      const step = { ArrowRight: 1, ArrowLeft: -1 }[event.key];
      if (step) select((i + step + tabsEls.length) % tabsEls.length);
    });
  });
  tablist.append(...tabsEls);
  return h("div", { class: "card" }, tablist, ...panelEls);
}

