// The session view's head: where it is, the session's facts, and its actions (fold now, clear
// context), each after a confirmation.
import { api } from "./api.js";
import { sid } from "./context.js";
import { fmt, h } from "./dom.js";
import { confirmAction } from "./shell.js";

function facts(session, clearedCount) {
  return clearedCount
    ? `${session.model} · ${fmt(session.message_count)} messages stored, ${fmt(clearedCount)} before the clear marker · ${fmt(session.total_tokens)} tokens after it`
    : `${session.model} · ${fmt(session.message_count)} messages · ${fmt(session.total_tokens)} tokens stored`;
}

/**
 * `session`: GET /sessions/{id}; `clearedCount`: messages before the clear marker;
 * `onDone()`: draw the view again after an action (a promise).
 * Returns {head, status, fold}: the head, the action's status line, the fold button.
 */
export function sessionHead({ session, clearedCount, onDone }) {
  const path = `/sessions/${sid(session.id)}`;
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
      if (ok) await act(() => api(`${path}/summarize`, { method: "POST", body: focus.value.trim() ? { focus: focus.value.trim() } : {} }));
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
      if (ok) await act(() => api(`${path}/clear`, { method: "POST" }));
    },
  });
  const status = h("p", { class: "muted", role: "status", id: "action-status" });
  async function act(call) {
    fold.disabled = clear.disabled = true;
    status.textContent = "Working…";
    try {
      const result = await call();
      const note = result && "folded" in result ? (result.folded ? `Folded ${result.messages_folded} messages.` : "Nothing left to fold.") : "Cleared.";
      await onDone();
      document.getElementById("action-status").textContent = note; // the new view's line
    } catch (err) {
      fold.disabled = clear.disabled = false;
      status.textContent = `Failed: ${err.message}`;
    }
  }
  const head = h(
    "div",
    { class: "head" },
    h(
      "div",
      {},
      h("p", { class: "crumb" }, h("a", { href: "#/", text: "Sessions" }), " / "),
      h("h1", { id: "session-title", text: session.id }),
      h("p", { class: "muted", id: "session-facts", text: facts(session, clearedCount), dataset: { version: String(session.summary ? session.summary.version : 0) } }),
    ),
    h("div", { class: "row actions" }, fold, clear),
  );
  return { head, status, fold };
}
