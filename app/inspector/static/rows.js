// The rows of the message list: a group's heading, a message, the cached prefix's end.
import { callIds, messageBody, resultIds } from "./blocks.js";
import { GROUPS } from "./context.js";
import { fmt, h } from "./dom.js";
import { changeMark } from "./marks.js";

/** A group's heading; `open` is whether its rows show, `onToggle` flips it (none for "sent"). */
export function groupRow(item, { open, onToggle }) {
  const [, title] = GROUPS.find(([g]) => g === item.group) || ["sent", "Sent to the model, in order"];
  const toggle = item.group === "sent" ? null : h("button", {
    type: "button",
    class: "small",
    id: `toggle-${item.group}`,
    "aria-expanded": String(open),
    text: open ? "Collapse" : "Show",
    onclick: onToggle,
  });
  const tokens = item.group === "cleared" ? "" : ` · ${fmt(item.tokens)} tokens`;
  return h("div", { class: `group-row group-${item.group}`, dataset: { group: item.group, count: String(item.count) } },
    h("h3", { text: `${title} (${fmt(item.count)})${tokens}` }), toggle);
}

export function edgeRow(edge, prefixTokens) {
  return h("div", {
    class: "cache-edge",
    id: "cache-edge",
    dataset: { tokens: String(edge.total) },
    text: `Cached prefix ends here: ${fmt(prefixTokens)} tokens, through ${edge.label}`,
  });
}

function pairLinks(message, store, jump) {
  const link = (seq, text, title) =>
    h("a", { class: "pair", href: `#msg-${seq}`, text, title, onclick: (event) => (event.preventDefault(), jump(seq)) });
  const links = [];
  for (const cid of message ? callIds(message) : []) {
    const target = store.results.get(cid);
    links.push(target ? link(target, `→ result #${target}`, `tool call ${cid}`) : h("span", { class: "pair pending", text: `→ no result loaded for ${cid}` }));
  }
  for (const rid of message ? resultIds(message) : []) {
    const source = store.calls.get(rid);
    if (source) links.push(link(source, `← call #${source}`, `tool call ${rid}`));
  }
  return links;
}

/**
 * A message: its explain entry (`item.entry`), its stored body from `store` (asked for when
 * not read yet), links to its tool calls' results and back (`jump(seq)` follows one), and
 * its status in the default view when a preview changes it (`changes`: id → status).
 */
export function messageRow(item, { store, changes, jump }) {
  const e = item.entry;
  const message = store.bySeq.get(e.seq);
  const known = store.bySeq.has(e.seq);
  if (!known) store.page(e.seq);
  const was = changes.get(e.id);
  const mark = changeMark(was);
  const tokens = e.tokens === null ? "" : message && e.tokens !== message.token_count ? `${fmt(e.tokens)} / ${fmt(message.token_count)} tok` : `${fmt(e.tokens ?? message?.token_count)} tok`;
  return h(
    "article",
    {
      class: `msg status-${e.status}${mark.cls}`,
      id: `msg-${e.seq}`,
      tabindex: "-1",
      "aria-label": `Message #${e.seq}, ${e.status}${was ? `, was ${was}` : ""}`,
      dataset: { id: message ? message.id : e.id, seq: String(e.seq), status: e.status, role: message ? message.role : "", ...mark.data },
    },
    h(
      "div",
      { class: "meta" },
      h("span", { class: "seq", text: `#${e.seq}` }),
      message ? h("span", { class: `badge role-${message.role}`, text: message.role }) : null,
      h("span", { class: `badge status ${e.status}`, text: e.status }),
      mark.badge,
      h("span", { class: "tokens", text: tokens }),
      message && message.name ? h("span", { class: "muted", text: message.name }) : null,
      ...pairLinks(message, store, jump),
    ),
    message ? messageBody(message) : h("p", { class: "muted", text: known ? "Removed." : "Loading…" }),
  );
}
