// A stored message's body, every block visible for what it is: text, tool calls of every
// shape (Anthropic tool_use, OpenAI tool_calls) with name and arguments, tool results,
// thinking (collapsed, with its size), images and documents as placeholders with tokens.
import { api } from "./api.js";
import { fmt, h } from "./dom.js";

export const COLLAPSE_AT = 600;

export function longText(text, label = "") {
  if (text.length <= COLLAPSE_AT) return h("pre", { text });
  return h(
    "details",
    { class: "long" },
    h("summary", { text: `${label}${text.slice(0, 160).replace(/\s+/g, " ")}… (${fmt(text.length)} chars)` }),
    h("pre", { text }),
  );
}

function pretty(value) {
  if (typeof value === "string") {
    try {
      return JSON.stringify(JSON.parse(value), null, 2); // OpenAI arguments: a JSON string
    } catch {
      return value;
    }
  }
  return JSON.stringify(value ?? {}, null, 2);
}

function head(kind, ...rest) {
  return h("div", { class: "block-head" }, h("span", { class: "kind", text: kind }), ...rest);
}

function toolCall(kind, name, id, args) {
  return h(
    "div",
    { class: "block call", dataset: { block: kind } },
    head(kind, h("code", { class: "name", text: name || "(no name)" }), id ? h("span", { class: "muted", text: id }) : null),
    longText(pretty(args), "arguments: "),
  );
}

function toolResult(block) {
  const nested = block.content;
  const body = Array.isArray(nested) ? nested.map(blockView) : longText(typeof nested === "string" ? nested : pretty(nested));
  return h(
    "div",
    { class: "block result", dataset: { block: "tool_result" } },
    head("tool_result", h("span", { class: "muted", text: block.tool_use_id || "" }), block.is_error ? h("span", { class: "error-flag", text: "error" }) : null),
    body,
  );
}

function thinking(kind, text) {
  return h(
    "details",
    { class: "block thinking", dataset: { block: kind } },
    h("summary", { text: `${kind} · ${fmt(text.length)} chars` }),
    h("pre", { text }),
  );
}

// Tokens of one block as the server counts it (app/tokens/counter.py): the count of a message
// holding only that block, less the count of the same message empty. Asked once per block.
const estimates = new WeakMap();
let emptyMessage = null;

function countOf(content) {
  return api("/count-tokens", { method: "POST", body: { messages: [{ role: "user", content }] } }).then((r) => r.tokens);
}

function blockTokens(block) {
  if (!estimates.has(block)) {
    emptyMessage = emptyMessage || countOf([]);
    estimates.set(block, Promise.all([countOf([block]), emptyMessage]).then(([one, none]) => one - none));
  }
  return estimates.get(block);
}

function describe(block) {
  const source = block.source || {};
  const url = block.image_url?.url || block.file?.file_data || source.url || source.data || block.url || "";
  const media = source.media_type || block.file?.filename || (url.startsWith("data:") ? url.slice(5, url.indexOf(";")) : "");
  const size = source.data || url.startsWith("data:") ? `${fmt(Math.round((source.data || url).length / 1024))} KB inline` : url ? "by URL" : "";
  return [block.title || block.name || "", media, size].filter(Boolean).join(" · ");
}

function placeholder(kind, block) {
  const tokens = h("span", { class: "tokens", text: "counting tokens…" });
  blockTokens(block).then(
    (n) => (tokens.textContent = `≈${fmt(n)} tokens`),
    () => (tokens.textContent = "tokens unknown"),
  );
  return h(
    "div",
    { class: "block placeholder", dataset: { block: kind } },
    head(kind, h("span", { class: "muted", text: describe(block) || block.type }), tokens),
  );
}

const KINDS = {
  text: (b) => longText(String(b.text ?? "")),
  input_text: (b) => longText(String(b.text ?? "")),
  output_text: (b) => longText(String(b.text ?? "")),
  tool_use: (b) => toolCall("tool_use", b.name, b.id, b.input),
  server_tool_use: (b) => toolCall("server_tool_use", b.name, b.id, b.input),
  tool_result: toolResult,
  thinking: (b) => thinking("thinking", String(b.thinking ?? "")),
  redacted_thinking: (b) => thinking("redacted_thinking", String(b.data ?? "")),
  image: (b) => placeholder("image", b),
  image_url: (b) => placeholder("image", b),
  input_image: (b) => placeholder("image", b),
  document: (b) => placeholder("document", b),
  file: (b) => placeholder("document", b),
  input_file: (b) => placeholder("document", b),
};

export function blockView(block) {
  if (!block || typeof block !== "object") return longText(String(block));
  const view = Object.hasOwn(KINDS, block.type) ? KINDS[block.type] : null;
  if (view) return view(block);
  const json = JSON.stringify(block, null, 2);
  return h(
    "details",
    { class: "block other", dataset: { block: String(block.type || "unknown") } },
    h("summary", { text: `${block.type || "untyped"} block · ${fmt(json.length)} chars` }),
    h("pre", { text: json }),
  );
}

export function messageBody(message) {
  const content = message.content;
  const parts = [];
  if (typeof content === "string") parts.push(longText(content));
  else if (Array.isArray(content)) parts.push(...content.map(blockView));
  else if (content !== null && content !== undefined) parts.push(longText(pretty(content)));
  for (const call of message.tool_calls || []) {
    const fn = call.function || {};
    parts.push(toolCall("tool_call", fn.name || call.name, call.id, fn.arguments ?? call.arguments));
  }
  return h("div", { class: "body" }, parts);
}

export function callIds(message) {
  const ids = (message.tool_calls || []).map((c) => c.id).filter(Boolean);
  if (Array.isArray(message.content)) {
    for (const b of message.content) if (b && b.type === "tool_use" && b.id) ids.push(b.id);
  }
  return ids;
}

export function resultIds(message) {
  const ids = message.tool_call_id ? [message.tool_call_id] : [];
  if (Array.isArray(message.content)) {
    for (const b of message.content) if (b && b.type === "tool_result" && b.tool_use_id) ids.push(b.tool_use_id);
  }
  return ids;
}
