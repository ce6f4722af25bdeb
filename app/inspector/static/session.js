// The session view: what the next request sends (a dry run of GET …/context: folds computed,
// nothing stored), why each stored message is or is not in it, and the provider request.
import { api, ApiError } from "./api.js";
import { callIds, messageBody, resultIds } from "./blocks.js";
import { fmt, h, show } from "./dom.js";
import { budgetBar, cacheView, foldNote, historyView, requestView, tabs } from "./panels.js";
import { VirtualList } from "./virtual.js";
import { confirmAction, renderError, updateWho } from "./app.js";

const SENT = ["included", "pruned", "truncated"];
const STATUSES = [...SENT, "summarized", "compacted", "dropped", "cleared"];
const ROLES = ["user", "assistant", "system", "tool"];
const FORMATS = ["anthropic", "openai", "openai_responses", "gemini", "raw"];
// Groups after the sent messages, and whether they start open.
const GROUPS = [
  ["summarized", "Summarized: folded into the summary, not sent", false],
  ["compacted", "Compacted: the provider's compaction stands for these, not sent", false],
  ["dropped", "Dropped: left out of this context", true],
  ["cleared", "Before the clear marker: not part of the context", false],
];
const PAGE = 200; // messages per GET …/messages read of the list

const sid = (id) => encodeURIComponent(id);

function contextOf(id, state) {
  return api(`/sessions/${sid(id)}/context`, {
    params: { dry_run: "true", explain: "true", model: state.model, max_tokens: state.maxTokens, format: state.format },
  });
}

async function allSummaries(id) {
  const out = [];
  let cursor = null;
  for (let i = 0; i < 20; i++) {
    const page = await api(`/sessions/${sid(id)}/summaries`, { params: { limit: 200, cursor } });
    out.push(...page.summaries);
    if (!page.next_cursor) break;
    cursor = page.next_cursor;
  }
  return out;
}

// Stored messages, read a page at a time as rows come into view (or all, for the role filter).
class MessageStore {
  constructor(id, onLoad) {
    this.id = id;
    this.onLoad = onLoad;
    this.bySeq = new Map();
    this.pages = new Map(); // page start → promise
    this.calls = new Map(); // tool call id → seq of the message making it
    this.results = new Map(); // tool call id → seq of the message answering it
  }

  page(seq) {
    const start = Math.floor((seq - 1) / PAGE) * PAGE;
    if (!this.pages.has(start)) {
      const read = api(`/sessions/${sid(this.id)}/messages`, { params: { after_seq: start, limit: PAGE } }).then((page) => {
        for (const m of page.messages) {
          this.bySeq.set(m.seq, m);
          for (const c of callIds(m)) this.calls.set(c, m.seq);
          for (const r of resultIds(m)) this.results.set(r, m.seq);
        }
        for (let s = start + 1; s <= start + PAGE; s++) if (!this.bySeq.has(s)) this.bySeq.set(s, null); // removed
        this.onLoad();
      });
      this.pages.set(start, read);
    }
    return this.pages.get(start);
  }

  async all(seqs, progress) {
    const starts = [...new Set(seqs.map((s) => Math.floor((s - 1) / PAGE) * PAGE))];
    for (let i = 0; i < starts.length; i++) {
      await this.page(starts[i] + 1);
      progress(i + 1, starts.length);
    }
  }
}

// Where the previous request's cached prefix ends: the chain of app/engine/prompt_cache.py —
// tools + system prompt, the summary (in the system, or as the first synthetic message),
// then each sent message — and the element whose running total is `prefix_tokens`.
export function cacheEdge(ctx) {
  const cache = ctx.usage.cache;
  if (!cache || cache.prefix_tokens <= 0) return null;
  const explain = ctx.explain || [];
  const pair = explain.some((e) => e.status === "synthetic" && e.id === "summary");
  let total = ctx.usage.system_tokens + ctx.usage.tools_tokens;
  let edge = { after: null, total, label: "tools and system prompt" };
  if (!pair && ctx.usage.summary_tokens > 0) {
    total += ctx.usage.summary_tokens;
    if (total <= cache.prefix_tokens) edge = { after: null, total, label: "tools, system prompt and summary" };
  }
  for (const e of explain) {
    if (e.status === "synthetic" && e.id === "system") continue; // openai: part of the head
    if (e.status !== "synthetic" && !SENT.includes(e.status)) continue;
    total += e.status === "synthetic" ? (e.id === "summary" ? ctx.usage.summary_tokens : 0) : e.tokens;
    if (total > cache.prefix_tokens) break;
    edge = { after: e.status === "synthetic" ? null : e.seq, total, label: e.status === "synthetic" ? `the ${e.id} message` : `#${e.seq}` };
  }
  return edge;
}

export async function renderSession(id, options = {}) {
  // Everything at once: the context's model defaults to the session's on the server.
  const state = { model: options.model, maxTokens: options.maxTokens || null, format: options.format || "anthropic" };
  const asked = contextOf(id, state).catch((err) => err);
  const summaries = allSummaries(id);
  summaries.catch(() => null); // reported where it is awaited
  const [session, models] = await Promise.all([api(`/sessions/${sid(id)}`), api("/models")]);
  updateWho();
  state.model = state.model || session.model;
  let fallback = null;
  let ctx = await asked;
  if (ctx instanceof ApiError && ctx.code === "budget_too_small" && state.maxTokens) {
    const d = ctx.details || {};
    fallback = `A budget of ${fmt(state.maxTokens)} tokens is below what the system prompt and tools need (${fmt((d.system_tokens || 0) + (d.tools_tokens || 0))} tokens): showing the default budget.`;
    state.maxTokens = null;
    ctx = await contextOf(id, state);
  }
  if (ctx instanceof Error) throw ctx;
  const custom = Boolean(state.maxTokens) || state.model !== session.model;

  // ---- actions
  const fold = h("button", {
    type: "button",
    id: "action-fold",
    text: "Fold now…",
    onclick: async () => {
      const focus = h("textarea", { id: "fold-focus", rows: "3", placeholder: "e.g. keep the failing test names" });
      const ok = await confirmAction({
        title: "Fold now",
        text: "Fold the older messages into the summary now (a new summary version). Stored messages stay.",
        okLabel: "Fold",
        extra: h("div", {}, h("label", { for: "fold-focus", text: "Focus (optional): what the summary must keep" }), focus),
      });
      if (ok) await act(() => api(`/sessions/${sid(id)}/summarize`, { method: "POST", body: focus.value.trim() ? { focus: focus.value.trim() } : {} }));
    },
  });
  const clear = h("button", {
    type: "button",
    id: "action-clear",
    class: "danger",
    text: "Clear context…",
    onclick: async () => {
      const ok = await confirmAction({
        title: "Clear context",
        text: "Start a fresh context: the summary is reset and the next context holds only messages appended after now. Stored messages stay.",
        okLabel: "Clear",
      });
      if (ok) await act(() => api(`/sessions/${sid(id)}/clear`, { method: "POST" }));
    },
  });
  const actionStatus = h("p", { class: "muted", role: "status", id: "action-status" });
  async function act(call) {
    fold.disabled = clear.disabled = true;
    actionStatus.textContent = "Working…";
    try {
      const result = await call();
      const note = result && "folded" in result ? (result.folded ? `Folded ${result.messages_folded} messages.` : "Nothing left to fold.") : "Cleared.";
      await renderSession(id, state);
      document.getElementById("action-status").textContent = note;
    } catch (err) {
      fold.disabled = clear.disabled = false;
      actionStatus.textContent = `Failed: ${err.message}`;
    }
  }
  const foldNow = h("button", { type: "button", id: "fold-to-see", text: "Fold now to see it", onclick: () => fold.click() });

  // ---- controls
  const rerender = (next) => renderSession(id, next).catch((err) => renderError(err, () => renderSession(id, next)));
  const modelSelect = h("select", { id: "model" }, models.models.map((m) => h("option", { value: m.name, text: `${m.name} (${fmt(m.context_window)})` })));
  if (!models.models.some((m) => m.name === state.model)) modelSelect.append(h("option", { value: state.model, text: state.model }));
  modelSelect.value = state.model;
  const formatSelect = h("select", { id: "format" }, FORMATS.map((f) => h("option", { value: f, text: f })));
  formatSelect.value = state.format;
  const info = models.models.find((m) => m.name === state.model) || { context_window: ctx.usage.context_window };
  const sliderMax = Math.max(1024, info.context_window);
  const value = String(state.maxTokens || ctx.usage.budget);
  const slider = h("input", { id: "budget", type: "range", min: "256", max: String(sliderMax), step: "64", value, "aria-valuetext": `${fmt(Number(value))} tokens` });
  const number = h("input", { id: "budget-number", type: "number", min: "1", max: String(sliderMax), value, "aria-label": "Budget in tokens" });
  const reset = h("button", { type: "button", id: "budget-reset", text: "Default budget" });
  const next = (changes) => ({ ...state, focusId: document.activeElement && document.activeElement.id, ...changes });
  slider.addEventListener("input", () => {
    number.value = slider.value;
    slider.setAttribute("aria-valuetext", `${fmt(Number(slider.value))} tokens`);
  });
  slider.addEventListener("change", () => rerender(next({ maxTokens: Number(slider.value) })));
  number.addEventListener("change", () => rerender(next({ maxTokens: Number(number.value) })));
  modelSelect.addEventListener("change", () => rerender(next({ model: modelSelect.value, maxTokens: null })));
  formatSelect.addEventListener("change", () => rerender(next({ format: formatSelect.value })));
  reset.addEventListener("click", () => rerender({ format: state.format, focusId: "budget-reset" }));

  // ---- the list: sent messages first, then the groups
  const entries = (ctx.explain || []).filter((e) => e.status !== "synthetic");
  const synthetic = (ctx.explain || []).filter((e) => e.status === "synthetic");
  const clearedCount = Math.max(0, session.message_count - ctx.messages_total);
  const cleared = [];
  for (let seq = 1; seq <= clearedCount; seq++) cleared.push({ id: `cleared-${seq}`, seq, status: "cleared", tokens: null });
  const byStatus = Object.fromEntries(STATUSES.map((s) => [s, []]));
  for (const e of [...cleared, ...entries]) byStatus[e.status].push(e);
  const edge = cacheEdge(ctx);
  const filters = { statuses: new Set(STATUSES), role: "", open: Object.fromEntries(GROUPS.map(([g, , open]) => [g, open])) };
  const store = new MessageStore(id, () => list.refresh());
  const roleOf = (e) => store.bySeq.get(e.seq)?.role;
  const keep = (e) => filters.statuses.has(e.status) && (!filters.role || roleOf(e) === filters.role);

  // One item per entry, made once: a filter over 50,000 messages only picks them again.
  const itemOf = new Map([...cleared, ...entries].map((e) => [e, { key: e.id, kind: "msg", entry: e }]));
  const edgeItem = { key: "cache-edge", kind: "edge" };
  function items() {
    const out = [];
    const sent = entries.filter((e) => SENT.includes(e.status) && keep(e));
    out.push({ key: "group-sent", kind: "group", group: "sent", count: sent.length, tokens: sent.reduce((n, e) => n + e.tokens, 0) });
    if (edge && edge.after === null) out.push(edgeItem);
    for (const e of sent) {
      out.push(itemOf.get(e));
      if (edge && edge.after === e.seq) out.push(edgeItem);
    }
    for (const [group] of GROUPS) {
      if (!byStatus[group].length) continue;
      const members = filters.statuses.has(group) ? byStatus[group].filter(keep) : [];
      out.push({ key: `group-${group}`, kind: "group", group, count: members.length, tokens: members.reduce((n, e) => n + (e.tokens || 0), 0) });
      if (filters.open[group]) for (const e of members) out.push(itemOf.get(e));
    }
    return out;
  }

  function groupRow(item) {
    const [, title] = GROUPS.find(([g]) => g === item.group) || ["sent", "Sent to the model, in order"];
    const toggle = item.group === "sent" ? null : h("button", {
      type: "button",
      class: "small",
      id: `toggle-${item.group}`,
      "aria-expanded": String(filters.open[item.group]),
      text: filters.open[item.group] ? "Collapse" : "Show",
      onclick: () => {
        filters.open[item.group] = !filters.open[item.group];
        apply(`toggle-${item.group}`);
      },
    });
    const tokens = item.group === "cleared" ? "" : ` · ${fmt(item.tokens)} tokens`;
    return h("div", { class: `group-row group-${item.group}`, dataset: { group: item.group, count: String(item.count) } },
      h("h3", { text: `${title} (${fmt(item.count)})${tokens}` }), toggle);
  }

  function link(seq, text, title) {
    return h("a", { class: "pair", href: `#msg-${seq}`, text, title, onclick: (event) => (event.preventDefault(), jump(seq)) });
  }

  function messageRow(item) {
    const e = item.entry;
    const message = store.bySeq.get(e.seq);
    const known = store.bySeq.has(e.seq);
    if (!known) store.page(e.seq);
    const links = [];
    for (const cid of message ? callIds(message) : []) {
      const target = store.results.get(cid);
      links.push(target ? link(target, `→ result #${target}`, `tool call ${cid}`) : h("span", { class: "pair pending", text: `→ no result loaded for ${cid}` }));
    }
    for (const rid of message ? resultIds(message) : []) {
      const source = store.calls.get(rid);
      if (source) links.push(link(source, `← call #${source}`, `tool call ${rid}`));
    }
    const tokens = e.tokens === null ? "" : message && e.tokens !== message.token_count ? `${fmt(e.tokens)} / ${fmt(message.token_count)} tok` : `${fmt(e.tokens ?? message?.token_count)} tok`;
    return h(
      "article",
      { class: `msg status-${e.status}`, id: `msg-${e.seq}`, tabindex: "-1", "aria-label": `Message #${e.seq}, ${e.status}`, dataset: { id: message ? message.id : e.id, seq: String(e.seq), status: e.status, role: message ? message.role : "" } },
      h(
        "div",
        { class: "meta" },
        h("span", { class: "seq", text: `#${e.seq}` }),
        message ? h("span", { class: `badge role-${message.role}`, text: message.role }) : null,
        h("span", { class: `badge status ${e.status}`, text: e.status }),
        h("span", { class: "tokens", text: tokens }),
        message && message.name ? h("span", { class: "muted", text: message.name }) : null,
        ...links,
      ),
      message ? messageBody(message) : h("p", { class: "muted", text: known ? "Removed." : "Loading…" }),
    );
  }

  const list = new VirtualList({
    label: "Messages",
    render: (item) =>
      item.kind === "group" ? groupRow(item)
      : item.kind === "edge" ? h("div", { class: "cache-edge", id: "cache-edge", dataset: { tokens: String(edge.total) }, text: `Cached prefix ends here: ${fmt(ctx.usage.cache.prefix_tokens)} tokens, through ${edge.label}` })
      : messageRow(item),
  });
  const shown = h("span", { class: "muted", role: "status", id: "shown" });
  function apply(focusId) {
    const all = items();
    list.setItems(all);
    let visible = 0;
    for (const item of all) visible += item.kind === "msg" ? 1 : 0;
    shown.textContent = `${fmt(visible)} messages listed`;
    if (focusId) document.getElementById(focusId)?.focus();
  }
  function jump(seq) {
    const e = [...entries, ...cleared].find((x) => x.seq === seq);
    if (!e) return;
    filters.statuses.add(e.status);
    if (e.status in filters.open) filters.open[e.status] = true;
    filters.role = "";
    roleSelect.value = "";
    apply();
    const row = list.scrollToIndex(list.indexOf(e.id));
    if (row) {
      row.focus();
      row.classList.add("flash");
      setTimeout(() => row.classList.remove("flash"), 1200);
    }
  }
  const statusButtons = STATUSES.filter((s) => byStatus[s].length).map((s) =>
    h("button", {
      type: "button",
      class: `chip ${s}`,
      "aria-pressed": "true",
      dataset: { filter: s },
      text: `${s} ${fmt(byStatus[s].length)}`,
      onclick: (event) => {
        const on = event.currentTarget.getAttribute("aria-pressed") !== "true";
        event.currentTarget.setAttribute("aria-pressed", String(on));
        if (on) filters.statuses.add(s);
        else filters.statuses.delete(s);
        apply();
      },
    }),
  );
  const roleSelect = h("select", { id: "role-filter" }, h("option", { value: "", text: "All roles" }), ROLES.map((r) => h("option", { value: r, text: r })));
  roleSelect.addEventListener("change", async () => {
    filters.role = roleSelect.value;
    if (filters.role) {
      const wanted = [...cleared, ...entries].filter((e) => filters.statuses.has(e.status) && !store.bySeq.has(e.seq));
      await store.all(wanted.map((e) => e.seq), (done, total) => (shown.textContent = `Reading messages for the role filter: ${done} of ${total} pages`));
    }
    apply();
  });

  // ---- header facts
  const facts = clearedCount
    ? `${session.model} · ${fmt(session.message_count)} messages stored, ${fmt(clearedCount)} before the clear marker · ${fmt(session.total_tokens)} tokens after it`
    : `${session.model} · ${fmt(session.message_count)} messages · ${fmt(session.total_tokens)} tokens stored`;
  const summaryBox = ctx.summary && ctx.summary.text !== null
    ? h(
        "section",
        { class: "card", "aria-labelledby": "summary-title", id: "summary" },
        h("h2", { id: "summary-title", text: `Summary v${ctx.summary.version} (${ctx.summary.method})${ctx.dry_run?.fold === "computed" ? ": computed for the next request, not stored yet" : ""}` }),
        h("p", { class: "muted", text: `Covers ${fmt(ctx.summary.message_count)} messages through #${ctx.summary.through_seq}; ${fmt(ctx.summary.tokens)} tokens.` }),
        h("details", {}, h("summary", { text: "Summary text" }), h("pre", { text: ctx.summary.text || "" })),
      )
    : null;

  show(
    h(
      "div",
      { class: "head" },
      h(
        "div",
        {},
        h("p", { class: "crumb" }, h("a", { href: "#/", text: "Sessions" }), " / "),
        h("h1", { id: "session-title", text: session.id }),
        h("p", { class: "muted", id: "session-facts", text: facts, dataset: { version: String(session.summary ? session.summary.version : 0) } }),
      ),
      h("div", { class: "row actions" }, fold, clear),
    ),
    actionStatus,
    fallback ? h("p", { class: "notice warn", role: "alert", id: "budget-fallback", text: fallback }) : null,
    h(
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
      foldNote(ctx, foldNow),
      h(
        "div",
        { class: "controls" },
        h("label", { for: "model", text: "Model" }),
        modelSelect,
        h("label", { for: "budget", text: "Budget (max_tokens)" }),
        slider,
        number,
        reset,
        h("label", { for: "format", text: "Format" }),
        formatSelect,
      ),
      budgetBar(ctx.usage),
      h(
        "p",
        { class: "muted", id: "counts" },
        `${fmt(ctx.messages_included)} messages sent of ${fmt(ctx.messages_total)} ${clearedCount ? "after the clear marker" : "stored"}` +
          (synthetic.length ? ` · added by Foldwise: ${synthetic.map((e) => e.id).join(", ")}` : ""),
      ),
      ctx.warnings.length ? h("ul", { class: "warnings" }, ctx.warnings.map((w) => h("li", { text: w }))) : null,
    ),
    cacheView(ctx, edge),
    summaryBox,
    tabs([
      ["messages", "Messages", [
        h("div", { class: "toolbar", role: "group", "aria-label": "Filter messages" }, h("span", { class: "muted", text: "Status" }), statusButtons, h("label", { for: "role-filter", text: "Role" }), roleSelect, shown),
        list.root,
      ]],
      ["request", "Request", requestView(ctx)],
    ]),
    h("div", { id: "history-slot" }),
  );
  apply();
  summaries.then((all) => document.getElementById("history-slot")?.replaceWith(historyView(all)), (err) => renderError(err));
  performance.mark("foldwise:session-painted");
  if (options.focusId) document.getElementById(options.focusId)?.focus();
}
