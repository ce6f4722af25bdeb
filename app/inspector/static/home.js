// The home page, the sessions list: sorted and searched by the server
// (GET /sessions?sort=&order=&id_prefix=), one page at a time; "Load more" follows
// next_cursor of the same listing.
import { api } from "./api.js";
import { fmt, h, hashFor, notice, show, when } from "./dom.js";
import { renderError, updateWho } from "./shell.js";

const PAGE = 50;
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

export async function renderList() {
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
