// A preview against the default view: which messages change status, marked in the list
// (the row's `changed` class, a dashed "was …" badge, data-was) and counted above it.
import { fmt, h } from "./dom.js";

const statusOf = (ctx) => new Map((ctx.explain || []).filter((e) => e.status !== "synthetic").map((e) => [e.id, e.status]));

/** Message id → its status in `baseline`, for each message whose status in `ctx` differs. */
export function statusChanges(baseline, ctx) {
  const changes = new Map();
  if (!baseline) return changes;
  const before = statusOf(baseline);
  for (const [id, status] of statusOf(ctx)) {
    const was = before.get(id);
    if (was && was !== status) changes.set(id, was);
  }
  return changes;
}

/** The row's mark: its extra class, the badge, the data attribute (none when unchanged). */
export function changeMark(was) {
  if (!was) return { cls: "", badge: null, data: {} };
  return { cls: " changed", badge: h("span", { class: "badge was", text: `was ${was}` }), data: { was } };
}

export function changesCount(changes, baseline) {
  if (!baseline) return null;
  const n = changes.size;
  return h("span", { id: "changed-count", text: ` · ${fmt(n)} ${n === 1 ? "message changes" : "messages change"} status from the default view` });
}
