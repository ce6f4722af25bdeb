// Foldwise Inspector: sessions list and session view, on the public HTTP API only.
import { api, ApiError, key } from "./api.js";
import { fmt, h, hashFor, notice, show, when } from "./dom.js";
import { renderSession } from "./session.js";

const who = document.getElementById("who");
const PAGE = 50;

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

export function renderError(err, retry) {
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

export function updateWho() {
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

export function confirmAction({ title, text, okLabel, extra }) {
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
