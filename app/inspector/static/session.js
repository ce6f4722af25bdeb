// The session view: what the next request sends (a dry run of GET …/context: folds computed,
// nothing stored), why each stored message is or is not in it, and the provider request.
// It reads the data (context.js) and composes the parts, each drawn from explicit inputs.
import { cacheEdge, loadView } from "./context.js";
import { h, show } from "./dom.js";
import { sessionHead } from "./header.js";
import { messageList } from "./list.js";
import { statusChanges } from "./marks.js";
import { cacheView, historyView, requestView, summaryView, tabs } from "./panels.js";
import { renderError, updateWho } from "./shell.js";
import { usageCard } from "./usage.js";

/** Draws session `id`; `options`: {model, maxTokens, format, focusId} for a preview. */
export async function renderSession(id, options = {}) {
  const state = { model: options.model, maxTokens: options.maxTokens || null, format: options.format || "anthropic" };
  const { session, models, ctx, custom, baseline, fallback, summaries } = await loadView(id, state);
  updateWho();
  const rerender = (next) => renderSession(id, next).catch((err) => renderError(err, () => renderSession(id, next)));

  const entries = (ctx.explain || []).filter((e) => e.status !== "synthetic");
  const clearedCount = Math.max(0, session.message_count - ctx.messages_total);
  const cleared = [];
  for (let seq = 1; seq <= clearedCount; seq++) cleared.push({ id: `cleared-${seq}`, seq, status: "cleared", tokens: null });
  const edge = cacheEdge(ctx);
  const changes = statusChanges(baseline, ctx);

  const { head, status, fold } = sessionHead({ session, clearedCount, onDone: () => renderSession(id, state) });
  const foldButton = h("button", { type: "button", id: "fold-to-see", text: "Fold now to see it", onclick: () => fold.click() });
  const list = messageList({ id, entries, cleared, edge, prefixTokens: ctx.usage.cache?.prefix_tokens, changes });
  show(
    head,
    status,
    fallback ? h("p", { class: "notice warn", role: "alert", id: "budget-fallback", text: fallback }) : null,
    usageCard({ ctx, state, custom, models, clearedCount, changes, baseline, foldButton, onChange: rerender }),
    cacheView(ctx, edge),
    summaryView(ctx),
    tabs([
      ["messages", "Messages", [list.toolbar, list.root]],
      ["request", "Request", requestView(ctx)],
    ]),
    h("div", { id: "history-slot" }),
  );
  list.apply();
  summaries.then((all) => document.getElementById("history-slot")?.replaceWith(historyView(all)), (err) => renderError(err));
  performance.mark("foldwise:session-painted");
  if (options.focusId) document.getElementById(options.focusId)?.focus();
}
