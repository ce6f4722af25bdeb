// The message list: the sent messages first, in order, then a group for each other status;
// filters by status and role; a jump to a message (opening its group, clearing filters).
import { GROUPS, SENT, STATUSES } from "./context.js";
import { fmt, h } from "./dom.js";
import { MessageStore } from "./messages.js";
import { edgeRow, groupRow, messageRow } from "./rows.js";
import { VirtualList } from "./virtual.js";

const ROLES = ["user", "assistant", "system", "tool"];

/**
 * Session `id`'s list. `entries`: the context's explain entries (no synthetic ones);
 * `cleared`: entries made for the messages before the clear marker; `edge`: cacheEdge(ctx),
 * `prefixTokens` the cache's prefix; `changes`: statusChanges against the default view.
 * Returns {toolbar, root, apply}: apply() draws the list.
 */
export function messageList({ id, entries, cleared, edge, prefixTokens, changes }) {
  const store = new MessageStore(id, () => list.refresh()); // rows are read as they show
  const byStatus = Object.fromEntries(STATUSES.map((s) => [s, []]));
  for (const e of [...cleared, ...entries]) byStatus[e.status].push(e);
  const filters = { statuses: new Set(STATUSES), role: "", open: Object.fromEntries(GROUPS.map(([g, , open]) => [g, open])) };
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

  const toggle = (group) => () => {
    filters.open[group] = !filters.open[group];
    apply(`toggle-${group}`);
  };
  const list = new VirtualList({
    label: "Messages",
    render: (item) =>
      item.kind === "group" ? groupRow(item, { open: filters.open[item.group], onToggle: toggle(item.group) })
      : item.kind === "edge" ? edgeRow(edge, prefixTokens)
      : messageRow(item, { store, changes, jump }),
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
  const toolbar = h("div", { class: "toolbar", role: "group", "aria-label": "Filter messages" },
    h("span", { class: "muted", text: "Status" }), statusButtons, h("label", { for: "role-filter", text: "Role" }), roleSelect, shown);
  return { toolbar, root: list.root, apply };
}
