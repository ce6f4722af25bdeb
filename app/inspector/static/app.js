// Foldwise Inspector: sessions list and session view, on the public HTTP API only.
import { api, ApiError, key } from "./api.js";
import { lineDiff } from "./diff.js";

const main = document.getElementById("main");
const who = document.getElementById("who");
const STATUSES = ["included", "pruned", "truncated", "summarized", "dropped"];
const ROLES = ["user", "assistant", "system", "tool"];
const COLLAPSE_AT = 600;
const PAGE = 50;

// ---------------------------------------------------------------- small DOM helpers

function h(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(attrs || {})) {
    if (value === undefined || value === null || value === false) continue;
    if (name === "class") node.className = value;
    else if (name === "text") node.textContent = value;
    else if (name.startsWith("on")) node.addEventListener(name.slice(2), value);
    else if (name === "dataset") Object.assign(node.dataset, value);
    else if (name === "style") {
      // Through the CSSOM: the page's CSP forbids style attributes.
      for (const rule of value.split(";")) {
        const [prop, val] = rule.split(":");
        if (prop && val) node.style.setProperty(prop.trim(), val.trim());
      }
    }
    else node.setAttribute(name, value === true ? "" : value);
  }
  for (const child of children.flat()) {
    if (child === undefined || child === null || child === false) continue;
    node.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return node;
}

const fmt = (n) => (typeof n === "number" ? n.toLocaleString("en-US") : "–");
const when = (iso) => (iso ? new Date(iso).toLocaleString() : "–");
const hashFor = (id) => `#/sessions/${encodeURIComponent(id)}`;

function show(...nodes) {
  main.replaceChildren(...nodes.filter((node) => node !== null && node !== undefined));
}

function notice(kind, title, text, ...actions) {
  return h(
    "section",
    { class: `notice ${kind}`, role: kind === "error" ? "alert" : "status", dataset: { state: kind } },
    h("h2", { text: title }),
    text ? h("p", { text }) : null,
    actions.length ? h("div", { class: "row" }, actions) : null,
  );
}

// ------------------------------------------------------------------- errors & key

function renderKeyPrompt(message) {
  const input = h("input", {
    id: "api-key",
    type: "password",
    autocomplete: "off",
    required: true,
    "aria-describedby": "key-help",
  });
  const form = h(
    "form",
    {
      class: "key-form",
      "aria-labelledby": "key-title",
      onsubmit: (event) => {
        event.preventDefault();
        key.set(input.value.trim());
        route();
      },
    },
    h("h2", { id: "key-title", text: "API key needed" }),
    h("p", { id: "key-help", text: message }),
    h("label", { for: "api-key", text: "API key" }),
    h("div", { class: "row" }, input, h("button", { type: "submit", class: "primary", text: "Use key" })),
    h("p", {
      class: "muted",
      text: "The key stays in this browser tab (sessionStorage) and is sent as a Bearer header.",
    }),
  );
  show(form);
  input.focus();
}

function renderError(err, retry) {
  if (!(err instanceof ApiError)) {
    console.error(err);
    show(notice("error", "Something went wrong", String(err), retryButton(retry)));
    return;
  }
  if (err.status === 401) {
    const had = key.get();
    key.clear();
    updateWho();
    renderKeyPrompt(
      had
        ? "That key was not accepted. Enter a valid Foldwise API key."
        : "This Foldwise requires an API key. Enter one to see your tenant's sessions.",
    );
    return;
  }
  if (err.status === 404) {
    show(
      notice(
        "error",
        "Not found",
        `${err.message}. It does not exist, or it belongs to another tenant.`,
        h("a", { href: "#/", class: "button", text: "All sessions" }),
      ),
    );
    return;
  }
  if (err.status === 0) {
    show(notice("error", "Server unreachable", `${err.message} Is it running?`, retryButton(retry)));
    return;
  }
  show(notice("error", `Error ${err.status}: ${err.code}`, err.message, retryButton(retry)));
}

function retryButton(retry) {
  return h("button", { type: "button", text: "Retry", onclick: () => (retry || route)() });
}

function updateWho() {
  who.replaceChildren();
  if (key.get()) {
    who.append(
      h("span", { class: "muted", text: "key set" }),
      h("button", {
        type: "button",
        class: "small",
        text: "Forget key",
        onclick: () => {
          key.clear();
          updateWho();
          route();
        },
      }),
    );
  }
}

// ------------------------------------------------------------------- confirmation

const dialog = document.getElementById("confirm");

function confirmAction({ title, text, okLabel, extra }) {
  return new Promise((resolve) => {
    document.getElementById("confirm-title").textContent = title;
    document.getElementById("confirm-text").textContent = text;
    const slot = document.getElementById("confirm-extra");
    slot.replaceChildren(...(extra ? [extra] : []));
    document.getElementById("confirm-ok").textContent = okLabel;
    const done = (ok) => {
      dialog.removeEventListener("close", onClose);
      resolve(ok);
    };
    const onClose = () => done(dialog.returnValue === "ok");
    dialog.addEventListener("close", onClose);
    document.getElementById("confirm-cancel").onclick = () => dialog.close("cancel");
    dialog.returnValue = "cancel";
    dialog.showModal();
  });
}

// ------------------------------------------------------------------- sessions list

// The list is sorted and searched by the server (GET /sessions?sort=&order=&id_prefix=),
// one page at a time; "Load more" follows next_cursor of the same listing.
const listState = { sessions: [], cursor: null, done: false, query: "", sort: "activity", generation: 0 };

const SORTS = {
  activity: "updated_at",
  messages: "message_count",
  tokens: "total_tokens",
  version: "summary_version",
};

// Ids are letters, digits and . _ : @ - (SessionCreate); anything else matches no session.
const ID_PREFIX = /^[A-Za-z0-9][A-Za-z0-9._:@-]{0,255}$/;

function pageSize() {
  const asked = Number(new URLSearchParams(location.search).get("page_size"));
  return Number.isInteger(asked) && asked >= 1 && asked <= 200 ? asked : PAGE;
}

async function loadMoreSessions() {
  const generation = listState.generation;
  if (listState.query && !ID_PREFIX.test(listState.query)) {
    listState.done = true;
    return;
  }
  const page = await api("/sessions", {
    params: {
      limit: pageSize(),
      cursor: listState.cursor,
      sort: SORTS[listState.sort],
      order: "desc",
      id_prefix: listState.query,
    },
  });
  if (generation !== listState.generation) return; // the sort or search changed meanwhile
  listState.sessions.push(...page.sessions);
  listState.cursor = page.next_cursor;
  listState.done = !page.next_cursor;
}

function resetList() {
  listState.generation += 1;
  listState.sessions = [];
  listState.cursor = null;
  listState.done = false;
}

async function renderList() {
  resetList();
  await loadMoreSessions();
  updateWho();

  const tbody = h("tbody");
  const count = h("p", { class: "muted", role: "status", id: "list-count" });
  let table;
  async function load(fresh) {
    const generation = fresh ? (resetList(), listState.generation) : listState.generation;
    table.setAttribute("aria-busy", "true");
    more.disabled = true;
    try {
      await loadMoreSessions();
    } catch (err) {
      renderError(err);
      return;
    }
    if (generation !== listState.generation) return;
    more.disabled = false;
    fill();
  }
  const more = h("button", {
    type: "button",
    id: "load-more",
    text: "Load more",
    onclick: () => load(false),
  });
  let typing = null;
  const search = h("input", {
    id: "search",
    type: "search",
    placeholder: "id starts with…",
    value: listState.query,
    oninput: () => {
      clearTimeout(typing);
      typing = setTimeout(() => {
        listState.query = search.value.trim();
        load(true);
      }, 200);
    },
  });
  const sort = h(
    "select",
    {
      id: "sort",
      onchange: () => {
        listState.sort = sort.value;
        load(true);
      },
    },
    h("option", { value: "activity", text: "Last activity" }),
    h("option", { value: "messages", text: "Messages" }),
    h("option", { value: "tokens", text: "Tokens" }),
    h("option", { value: "version", text: "Summary version" }),
  );
  sort.value = listState.sort;

  function fill() {
    const rows = listState.sessions;
    tbody.replaceChildren(
      ...rows.map((s) =>
        h(
          "tr",
          { dataset: { session: s.id } },
          h("th", { scope: "row" }, h("a", { href: hashFor(s.id), text: s.id })),
          h("td", { text: s.model }),
          h("td", { class: "num", text: fmt(s.message_count) }),
          h("td", { class: "num", text: fmt(s.total_tokens) }),
          h("td", { class: "num", text: s.summary ? `v${s.summary.version}` : "–" }),
          h("td", { text: when(s.updated_at) }),
        ),
      ),
    );
    count.textContent =
      `${rows.length} session` +
      (rows.length === 1 ? "" : "s") +
      (listState.query ? ` with an id starting with “${listState.query}”` : "") +
      (listState.done ? "" : " loaded (more on the server)");
    more.hidden = listState.done;
    table.dataset.listing = `${listState.sort}|${listState.query}`;
    table.setAttribute("aria-busy", "false");
  }

  table = h(
    "table",
    { class: "sessions", "aria-describedby": "list-count" },
    h(
      "thead",
      {},
      h(
        "tr",
        {},
        h("th", { scope: "col", text: "Session" }),
        h("th", { scope: "col", text: "Model" }),
        h("th", { scope: "col", class: "num", text: "Messages" }),
        h("th", { scope: "col", class: "num", text: "Tokens" }),
        h("th", { scope: "col", class: "num", text: "Summary" }),
        h("th", { scope: "col", text: "Last activity" }),
      ),
    ),
    tbody,
  );
  fill();
  const empty = listState.sessions.length || listState.query
    ? null
    : notice("info", "No sessions yet", "Create one with POST /sessions, or seed a demo: foldwise demo.");
  show(
    h("h1", { text: "Sessions" }),
    h(
      "div",
      { class: "toolbar" },
      h("label", { for: "search", text: "Search by id" }),
      search,
      h("label", { for: "sort", text: "Sort by" }),
      sort,
    ),
    empty,
    h("div", { class: "scroll" }, table),
    h("div", { class: "row" }, count, more),
  );
}

// ------------------------------------------------------------------- session view

async function allMessages(id) {
  const out = [];
  let after = 0;
  for (;;) {
    const page = await api(`/sessions/${encodeURIComponent(id)}/messages`, {
      params: { after_seq: after, limit: 1000 },
    });
    out.push(...page.messages);
    if (page.next_after_seq === null || page.next_after_seq === undefined) return out;
    after = page.next_after_seq;
  }
}

async function allSummaries(id) {
  const out = [];
  let cursor = null;
  for (let i = 0; i < 20; i++) {
    const page = await api(`/sessions/${encodeURIComponent(id)}/summaries`, {
      params: { limit: 200, cursor },
    });
    out.push(...page.summaries);
    if (!page.next_cursor) break;
    cursor = page.next_cursor;
  }
  return out;
}

function previewContext(id, { model, maxTokens }) {
  return api(`/sessions/${encodeURIComponent(id)}/context`, {
    params: { preview: "true", explain: "true", model, max_tokens: maxTokens },
  });
}

function textOf(message) {
  const content = message.content;
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return JSON.stringify(content, null, 2);
  return content
    .map((block) => {
      if (block.type === "text") return block.text;
      if (block.type === "tool_use") return `[tool_use ${block.name} ${JSON.stringify(block.input)}]`;
      if (block.type === "tool_result") {
        const inner = Array.isArray(block.content)
          ? block.content.map((b) => b.text || "").join("\n")
          : String(block.content ?? "");
        return `[tool_result]\n${inner}`;
      }
      return `[${block.type}]`;
    })
    .join("\n");
}

function callIds(message) {
  const ids = [];
  for (const call of message.tool_calls || []) if (call.id) ids.push(call.id);
  if (Array.isArray(message.content)) {
    for (const block of message.content) if (block.type === "tool_use" && block.id) ids.push(block.id);
  }
  return ids;
}

function resultIds(message) {
  const ids = [];
  if (message.tool_call_id) ids.push(message.tool_call_id);
  if (Array.isArray(message.content)) {
    for (const block of message.content) {
      if (block.type === "tool_result" && block.tool_use_id) ids.push(block.tool_use_id);
    }
  }
  return ids;
}

function budgetBar(usage) {
  // The bar is the budget, to scale; the reserved output sits after it (labelled, not to
  // scale: it can dwarf a small budget), and the threshold closes the window's usable part.
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
  ];
  const thresholdTokens = Math.floor(usage.threshold * window);
  const inner = h("div", { class: "bar-budget" });
  for (const [cls, label, n] of parts) {
    if (n <= 0) continue;
    inner.append(
      h("span", {
        class: `seg ${cls}`,
        style: `flex-grow:${n}`,
        title: `${label}: ${fmt(n)} tokens (${((100 * n) / budget).toFixed(1)}% of the budget)`,
        tabindex: "0",
        "aria-label": `${label}: ${fmt(n)} tokens`,
        dataset: { part: cls, tokens: String(n) },
      }),
    );
  }
  const bar = h(
    "div",
    {
      class: "bar",
      role: "group",
      "aria-label":
        `Budget of ${fmt(usage.budget)} tokens: ` +
        parts.map(([, label, n]) => `${label} ${fmt(n)}`).join(", ") +
        `; ${fmt(usage.reserved_output_tokens)} reserved for output; threshold ${Math.round(usage.threshold * 100)}% of a ${fmt(window)}-token window.`,
    },
    inner,
    h(
      "span",
      {
        class: "seg reserved",
        title: `Reserved output: ${fmt(usage.reserved_output_tokens)} tokens (not to scale)`,
        dataset: { part: "reserved", tokens: String(usage.reserved_output_tokens) },
      },
      h("span", { class: "cap", text: `+${fmt(usage.reserved_output_tokens)} out` }),
    ),
    h("span", {
      class: "mark threshold",
      title: `Threshold: ${Math.round(usage.threshold * 100)}% of the window = ${fmt(thresholdTokens)} tokens`,
    }),
  );
  const legend = h(
    "dl",
    { class: "legend", id: "usage-legend" },
    ...[
      ["system", "System prompt", usage.system_tokens],
      ["tools", "Tools", usage.tools_tokens],
      ["summary", "Summary", usage.summary_tokens],
      ["messages", "Messages", usage.message_tokens],
      ["free", "Free", free],
      ["reserved", "Reserved output", usage.reserved_output_tokens],
    ].map(([cls, label, n]) =>
      h(
        "div",
        { dataset: { usage: cls } },
        h("dt", {}, h("span", { class: `swatch ${cls}`, "aria-hidden": "true" }), label),
        h("dd", { text: fmt(n) }),
      ),
    ),
    h("div", { dataset: { usage: "total" } }, h("dt", { text: "Total sent" }), h("dd", { text: fmt(usage.total_tokens) })),
    h("div", { dataset: { usage: "budget" } }, h("dt", { text: "Budget" }), h("dd", { text: fmt(usage.budget) })),
    h("div", { dataset: { usage: "window" } }, h("dt", { text: "Window" }), h("dd", { text: fmt(window) })),
    h(
      "div",
      { dataset: { usage: "threshold" } },
      h("dt", {}, h("span", { class: "swatch threshold", "aria-hidden": "true" }), `Threshold ${Math.round(usage.threshold * 100)}%`),
      h("dd", { text: fmt(thresholdTokens) }),
    ),
  );
  return h("div", { class: "bar-wrap" }, bar, legend);
}

const CACHE_REASONS = {
  none: "the previous context is a prefix of this one: the provider's prompt cache can read it",
  first: "no previous context was served for this session and model",
  fold: "a fold rewrote the summary, so the context changes from its start",
  clear: "the context was cleared",
  prune: "an older message is now sent as an excerpt",
  budget: "a different budget dropped or truncated earlier messages",
  settings: "different settings (placement, pinning, breakpoints) changed the start",
};

function cacheView(ctx) {
  const cache = ctx.usage.cache;
  if (!cache) return notice("info", "Prompt cache", "This context reports no cache information.");
  const total = Math.max(1, ctx.usage.estimated_tokens);
  const share = Math.min(100, (100 * cache.prefix_tokens) / total);
  return h(
    "section",
    { class: "card", "aria-labelledby": "cache-title", id: "cache" },
    h("h2", { id: "cache-title", text: "Prompt cache" }),
    h(
      "div",
      {
        class: "bar thin",
        role: "img",
        "aria-label": `${fmt(cache.prefix_tokens)} of ${fmt(ctx.usage.estimated_tokens)} tokens are the previous request's prefix`,
      },
      h("span", { class: "seg cached", style: `width:${share}%`, title: `Cached prefix: ${fmt(cache.prefix_tokens)} tokens` }),
    ),
    h(
      "p",
      {},
      h("strong", { text: `${fmt(cache.prefix_tokens)} tokens` }),
      ` shared with the last context served for ${ctx.model} · reason `,
      h("code", { id: "cache-reason", text: cache.reason }),
      `: ${CACHE_REASONS[cache.reason] || cache.reason}. Breakpoints placed: ${cache.breakpoints}.`,
    ),
  );
}

function historyView(summaries) {
  if (!summaries.length) {
    return h(
      "section",
      { class: "card", "aria-labelledby": "history-title", id: "history" },
      h("h2", { id: "history-title", text: "Summary history" }),
      h("p", { class: "muted", text: "No fold yet: every message after the clear marker is sent." }),
    );
  }
  // Newest first from the API; each version diffs against the one before it.
  const rows = summaries.map((s, i) => {
    const previous = summaries[i + 1];
    const stats = s.stats || {};
    const diff = lineDiff(previous ? previous.text : "", s.text || "");
    const pre = h(
      "pre",
      { class: "diff" },
      diff.map((d) => h("span", { class: d.op, text: `${d.op === "add" ? "+ " : d.op === "del" ? "- " : "  "}${d.text}\n` })),
    );
    return h(
      "details",
      { class: "version", dataset: { version: String(s.version) } },
      h(
        "summary",
        {},
        h("strong", { text: `v${s.version}` }),
        h("span", { class: `badge method-${s.method}`, text: s.method }),
        h("span", { text: stats.trigger ? `trigger ${stats.trigger}` : "" }),
        h("span", { text: `${fmt(s.tokens)} tokens` }),
        h("span", {
          text:
            stats.messages_before !== undefined
              ? `messages ${fmt(stats.messages_before)} → ${fmt(stats.messages_after)}`
              : "",
        }),
        h("span", {
          text:
            stats.tokens_before !== undefined
              ? `context ${fmt(stats.tokens_before)} → ${fmt(stats.tokens_after)} tokens`
              : "",
        }),
        h("span", { class: "muted", text: when(s.created_at) }),
      ),
      h("p", {
        class: "muted",
        text: previous ? `Changes from v${previous.version}:` : "First version:",
      }),
      pre,
    );
  });
  return h(
    "section",
    { class: "card", "aria-labelledby": "history-title", id: "history" },
    h("h2", { id: "history-title", text: `Summary history (${summaries.length})` }),
    rows,
  );
}

function jump(event) {
  event.preventDefault();
  const target = document.getElementById(event.currentTarget.getAttribute("href").slice(1));
  if (!target) return;
  target.hidden = false;
  target.scrollIntoView({ block: "center" });
  target.focus();
  target.classList.add("flash");
  setTimeout(() => target.classList.remove("flash"), 1200);
}

function messageRow(message, item, pairs, baseline) {
  const status = item ? item.status : "cleared";
  const text = textOf(message);
  const body =
    text.length > COLLAPSE_AT
      ? h(
          "details",
          {},
          h("summary", { text: `${text.slice(0, 160).replace(/\s+/g, " ")}… (${fmt(text.length)} chars)` }),
          h("pre", { text }),
        )
      : h("pre", { text });
  const links = [];
  for (const id of callIds(message)) {
    const target = pairs.results.get(id);
    links.push(
      target
        ? h("a", { class: "pair", href: `#msg-${target.seq}`, onclick: jump, text: `→ result #${target.seq}`, title: `tool call ${id}` })
        : h("span", { class: "pair pending", text: `→ pending ${id}` }),
    );
  }
  for (const id of resultIds(message)) {
    const source = pairs.calls.get(id);
    if (source) {
      links.push(h("a", { class: "pair", href: `#msg-${source.seq}`, onclick: jump, text: `← call #${source.seq}`, title: `tool call ${id}` }));
    }
  }
  const was = baseline && baseline.get(message.id);
  const changed = was && was !== status;
  return h(
    "li",
    {
      class: `msg status-${status}${changed ? " changed" : ""}${links.length ? " paired" : ""}`,
      id: `msg-${message.seq}`,
      tabindex: "-1",
      dataset: { id: message.id, seq: String(message.seq), status, role: message.role },
    },
    h(
      "div",
      { class: "meta" },
      h("span", { class: "seq", text: `#${message.seq}` }),
      h("span", { class: `badge role-${message.role}`, text: message.role }),
      h("span", { class: `badge status ${status}`, text: status }),
      changed ? h("span", { class: "badge was", text: `was ${was}` }) : null,
      h("span", {
        class: "tokens",
        text: item && item.tokens !== message.token_count ? `${fmt(item.tokens)} / ${fmt(message.token_count)} tok` : `${fmt(message.token_count)} tok`,
      }),
      message.name ? h("span", { class: "muted", text: message.name }) : null,
      ...links,
    ),
    body,
  );
}

function statusMap(ctx) {
  return new Map((ctx.explain || []).filter((e) => e.status !== "synthetic").map((e) => [e.id, e.status]));
}

async function renderSession(id, options = {}) {
  const sid = encodeURIComponent(id);
  const [session, models] = await Promise.all([api(`/sessions/${sid}`), api("/models")]);
  updateWho();
  const state = {
    model: options.model || session.model,
    maxTokens: options.maxTokens || null,
  };
  const [messages, summaries, ctx, baselineCtx] = await Promise.all([
    allMessages(id),
    allSummaries(id),
    previewContext(id, state),
    state.maxTokens || state.model !== session.model
      ? previewContext(id, { model: session.model, maxTokens: null })
      : null,
  ]);
  const baseline = baselineCtx ? statusMap(baselineCtx) : null;

  // ---- header & actions
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
      if (!ok) return;
      await act(() =>
        api(`/sessions/${sid}/summarize`, { method: "POST", body: focus.value.trim() ? { focus: focus.value.trim() } : {} }),
      );
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
      if (ok) await act(() => api(`/sessions/${sid}/clear`, { method: "POST" }));
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
      const status = document.getElementById("action-status");
      if (status) status.textContent = note;
    } catch (err) {
      fold.disabled = clear.disabled = false;
      actionStatus.textContent = `Failed: ${err.message}`;
    }
  }

  // ---- preview controls
  const info = models.models.find((m) => m.name === state.model) || { context_window: ctx.usage.context_window };
  const modelSelect = h(
    "select",
    { id: "model" },
    models.models.map((m) => h("option", { value: m.name, text: `${m.name} (${fmt(m.context_window)})` })),
  );
  modelSelect.value = state.model;
  const sliderMax = Math.max(1024, info.context_window);
  const slider = h("input", {
    id: "budget",
    type: "range",
    min: "256",
    max: String(sliderMax),
    step: "64",
    value: String(state.maxTokens || ctx.usage.budget),
    "aria-valuetext": `${fmt(state.maxTokens || ctx.usage.budget)} tokens`,
  });
  const number = h("input", {
    id: "budget-number",
    type: "number",
    min: "1",
    max: String(sliderMax),
    value: String(state.maxTokens || ctx.usage.budget),
    "aria-label": "Budget in tokens",
  });
  const reset = h("button", { type: "button", id: "budget-reset", text: "Default budget" });
  let timer = null;
  const apply = (value) => {
    clearTimeout(timer);
    timer = setTimeout(() => {
      const focusId = document.activeElement && document.activeElement.id;
      const preview = { model: modelSelect.value, maxTokens: value, focusId };
      renderSession(id, preview).catch((err) => renderError(err, () => renderSession(id, preview)));
    }, 250);
  };
  slider.addEventListener("input", () => {
    number.value = slider.value;
    slider.setAttribute("aria-valuetext", `${fmt(Number(slider.value))} tokens`);
  });
  slider.addEventListener("change", () => apply(Number(slider.value)));
  number.addEventListener("change", () => apply(Number(number.value)));
  modelSelect.addEventListener("change", () => {
    const preview = { model: modelSelect.value, maxTokens: null, focusId: "model" };
    renderSession(id, preview).catch((err) => renderError(err, () => renderSession(id, preview)));
  });
  reset.addEventListener("click", () =>
    renderSession(id, { focusId: "budget-reset" }).catch((err) => renderError(err)),
  );
  const previewing = state.maxTokens || state.model !== session.model;

  // ---- messages
  const explain = new Map((ctx.explain || []).map((e) => [e.id, e]));
  const synthetic = (ctx.explain || []).filter((e) => e.status === "synthetic");
  const pairs = { calls: new Map(), results: new Map() };
  for (const m of messages) {
    for (const cid of callIds(m)) pairs.calls.set(cid, m);
    for (const rid of resultIds(m)) pairs.results.set(rid, m);
  }
  const filters = { statuses: new Set(STATUSES.concat(["cleared"])), role: "" };
  const list = h("ol", { class: "messages", id: "messages", "aria-label": "Stored messages" });
  const counts = {};
  for (const m of messages) {
    const s = explain.get(m.id)?.status || "cleared";
    counts[s] = (counts[s] || 0) + 1;
  }
  const rows = messages.map((m) => messageRow(m, explain.get(m.id), pairs, baseline));
  function applyFilters() {
    let visible = 0;
    for (const row of rows) {
      const show = filters.statuses.has(row.dataset.status) && (!filters.role || row.dataset.role === filters.role);
      row.hidden = !show;
      if (show) visible++;
    }
    shown.textContent = `${visible} of ${rows.length} messages shown`;
  }
  const shown = h("span", { class: "muted", role: "status", id: "shown" });
  const statusButtons = STATUSES.concat(counts.cleared ? ["cleared"] : []).map((s) =>
    h("button", {
      type: "button",
      class: `chip ${s}`,
      "aria-pressed": "true",
      dataset: { filter: s },
      text: `${s} ${counts[s] || 0}`,
      onclick: (event) => {
        const button = event.currentTarget;
        const on = button.getAttribute("aria-pressed") !== "true";
        button.setAttribute("aria-pressed", String(on));
        if (on) filters.statuses.add(s);
        else filters.statuses.delete(s);
        applyFilters();
      },
    }),
  );
  const roleSelect = h(
    "select",
    { id: "role-filter", onchange: () => ((filters.role = roleSelect.value), applyFilters()) },
    h("option", { value: "", text: "All roles" }),
    ROLES.map((r) => h("option", { value: r, text: r })),
  );
  list.append(...rows);
  // Where the previous request's cached prefix ends, in the sent order.
  const cache = ctx.usage.cache;
  if (cache && cache.prefix_tokens > 0 && ctx.explain) {
    let sum = 0;
    for (const e of ctx.explain) {
      if (e.status === "dropped" || e.status === "summarized") continue;
      sum += e.tokens;
      if (sum > cache.prefix_tokens) {
        const row = rows.find((r) => r.dataset.id === e.id);
        if (row) {
          row.before(
            h("li", { class: "cache-edge", id: "cache-edge", text: `cached prefix ends here (${fmt(cache.prefix_tokens)} tokens)` }),
          );
        }
        break;
      }
    }
  }
  applyFilters();

  const summaryBox = ctx.summary
    ? h(
        "section",
        { class: "card", "aria-labelledby": "summary-title", id: "summary" },
        h("h2", { id: "summary-title", text: `Current summary v${ctx.summary.version} (${ctx.summary.method})` }),
        h("p", {
          class: "muted",
          text: `Covers ${fmt(ctx.summary.message_count)} messages through #${ctx.summary.through_seq}; ${fmt(ctx.summary.tokens)} tokens.`,
        }),
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
        h("p", {
          class: "muted",
          text: `${session.model} · ${fmt(session.message_count)} messages · ${fmt(session.total_tokens)} tokens stored · summary ${session.summary ? `v${session.summary.version}` : "none"}`,
          id: "session-facts",
          dataset: { version: String(session.summary ? session.summary.version : 0) },
        }),
      ),
      h("div", { class: "row actions" }, fold, clear),
    ),
    actionStatus,
    h(
      "section",
      { class: "card", "aria-labelledby": "window-title", id: "window" },
      h(
        "div",
        { class: "row spread" },
        h("h2", { id: "window-title", text: "Context window" }),
        h("span", {
          class: previewing ? "badge preview" : "badge",
          id: "mode",
          text: previewing ? "preview: nothing folds or is recorded" : "as the next request would see it",
        }),
      ),
      h(
        "div",
        { class: "controls" },
        h("label", { for: "model", text: "Model" }),
        modelSelect,
        h("label", { for: "budget", text: "Budget (max_tokens)" }),
        slider,
        number,
        reset,
      ),
      budgetBar(ctx.usage),
      h(
        "p",
        { class: "muted", id: "counts" },
        `${fmt(ctx.messages_included)} sent of ${fmt(ctx.messages_total)} messages` +
          (synthetic.length ? ` · added by Foldwise: ${synthetic.map((e) => e.id).join(", ")}` : "") +
          (baseline ? ` · ${[...statusMap(ctx)].filter(([k, v]) => baseline.get(k) !== v).length} messages change status from the default` : ""),
      ),
      ctx.warnings.length ? h("ul", { class: "warnings" }, ctx.warnings.map((w) => h("li", { text: w }))) : null,
    ),
    cacheView(ctx),
    summaryBox,
    h(
      "section",
      { class: "card", "aria-labelledby": "messages-title" },
      h("h2", { id: "messages-title", text: "Messages" }),
      h(
        "div",
        { class: "toolbar", role: "group", "aria-label": "Filter messages" },
        h("span", { class: "muted", text: "Status" }),
        statusButtons,
        h("label", { for: "role-filter", text: "Role" }),
        roleSelect,
        shown,
      ),
      list,
    ),
    historyView(summaries),
  );
  // A control that re-rendered the view keeps the keyboard focus.
  if (options.focusId) document.getElementById(options.focusId)?.focus();
}

// ------------------------------------------------------------------- routing

let generation = 0;

async function route() {
  const mine = ++generation;
  const path = location.hash.replace(/^#/, "") || "/";
  const match = path.match(/^\/sessions\/(.+)$/);
  const run = match
    ? () => renderSession(decodeURIComponent(match[1]))
    : () => renderList();
  try {
    await run();
    if (mine === generation) document.title = match ? `${decodeURIComponent(match[1])} · Foldwise Inspector` : "Foldwise Inspector";
  } catch (err) {
    if (mine === generation) renderError(err, route);
  }
}

window.addEventListener("hashchange", route);
route();
