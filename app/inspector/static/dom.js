// Small DOM and number helpers shared by the views.
export const main = document.getElementById("main");

export function h(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(attrs || {})) {
    if (value === undefined || value === null || value === false) continue;
    if (name === "class") node.className = value;
    else if (name === "text") node.textContent = value;
    else if (name.startsWith("on")) node.addEventListener(name.slice(2), value);
    else if (name === "dataset") Object.assign(node.dataset, value);
    else node.setAttribute(name, value === true ? "" : value);
  }
  for (const child of children.flat()) {
    if (child === undefined || child === null || child === false) continue;
    node.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return node;
}

export const fmt = (n) => (typeof n === "number" ? n.toLocaleString("en-US") : "–");
export const when = (iso) => (iso ? new Date(iso).toLocaleString() : "–");
export const hashFor = (id) => `#/sessions/${encodeURIComponent(id)}`;
// A share as a percentage with up to one decimal: 0.012 → "1.2%", 0.8 → "80%".
export const pct = (share) => `${Number((100 * share).toFixed(1))}%`;

export function show(...nodes) {
  main.replaceChildren(...nodes.filter((node) => node !== null && node !== undefined));
}

export function notice(kind, title, text, ...actions) {
  return h(
    "section",
    { class: `notice ${kind}`, role: kind === "error" ? "alert" : "status", dataset: { state: kind } },
    h("h2", { text: title }),
    text ? h("p", { text }) : null,
    actions.length ? h("div", { class: "row" }, actions) : null,
  );
}
