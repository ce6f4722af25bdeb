// What the session view shows, read from the API: the context (a dry run of GET …/context with
// explain), the default view's to compare a preview with, the session, the models, the summaries.
import { api, ApiError } from "./api.js";
import { fmt } from "./dom.js";

export const SENT = ["included", "pruned", "truncated"];
export const STATUSES = [...SENT, "summarized", "compacted", "dropped", "cleared"];
// Groups after the sent messages: their status, title, and whether they start open.
export const GROUPS = [
  ["summarized", "Summarized: folded into the summary, not sent", false],
  ["compacted", "Compacted: the provider's compaction stands for these, not sent", false],
  ["dropped", "Dropped: left out of this context", true],
  ["cleared", "Before the clear marker: not part of the context", false],
];

export const sid = (id) => encodeURIComponent(id);

function contextOf(id, state) {
  return api(`/sessions/${sid(id)}/context`, {
    params: { dry_run: "true", explain: "true", model: state.model, max_tokens: state.maxTokens, format: state.format },
  });
}

async function allSummaries(id) {
  const out = [];
  let cursor = null;
  for (let i = 0; i < 20; i++) {
    const page = await api(`/sessions/${sid(id)}/summaries`, { params: { limit: 200, cursor } });
    out.push(...page.summaries);
    if (!page.next_cursor) break;
    cursor = page.next_cursor;
  }
  return out;
}

/**
 * Everything at once for `state` ({model, maxTokens, format}; the model defaults to the
 * session's on the server). Returns {session, models, ctx, custom, baseline, fallback, summaries}:
 * `baseline` is the default view's context when `state` asks for other parameters (null
 * otherwise), `fallback` the reason a budget too small was replaced by the default one, and
 * `summaries` a promise (the history comes after the first paint); `custom` whether `state`
 * differs from the default view. `state` is updated in place.
 */
export async function loadView(id, state) {
  const asked = contextOf(id, state).catch((err) => err);
  const other = Boolean(state.maxTokens || state.model);
  const defaults = other ? contextOf(id, { format: state.format }).catch((err) => err) : null;
  const summaries = allSummaries(id);
  summaries.catch(() => null); // reported where it is awaited
  const [session, models] = await Promise.all([api(`/sessions/${sid(id)}`), api("/models")]);
  state.model = state.model || session.model;
  let fallback = null;
  let ctx = await asked;
  if (ctx instanceof ApiError && ctx.code === "budget_too_small" && state.maxTokens) {
    const d = ctx.details || {};
    fallback = `A budget of ${fmt(state.maxTokens)} tokens is below what the system prompt and tools need (${fmt((d.system_tokens || 0) + (d.tools_tokens || 0))} tokens): showing the default budget.`;
    state.maxTokens = null;
    ctx = await (state.model === session.model && defaults ? defaults : contextOf(id, state));
  }
  if (ctx instanceof Error) throw ctx;
  const custom = Boolean(state.maxTokens) || state.model !== session.model;
  const baseline = custom ? await defaults : null;
  if (baseline instanceof Error) throw baseline;
  return { session, models, ctx, custom, baseline, fallback, summaries };
}

// Where the previous request's cached prefix ends: the chain of app/engine/prompt_cache.py —
// tools + system prompt, the summary (in the system, or as the first synthetic message),
// then each sent message — and the element whose running total is `prefix_tokens`.
export function cacheEdge(ctx) {
  const cache = ctx.usage.cache;
  if (!cache || cache.prefix_tokens <= 0) return null;
  const explain = ctx.explain || [];
  const pair = explain.some((e) => e.status === "synthetic" && e.id === "summary");
  let total = ctx.usage.system_tokens + ctx.usage.tools_tokens;
  let edge = { after: null, total, label: "tools and system prompt" };
  if (!pair && ctx.usage.summary_tokens > 0) {
    total += ctx.usage.summary_tokens;
    if (total <= cache.prefix_tokens) edge = { after: null, total, label: "tools, system prompt and summary" };
  }
  for (const e of explain) {
    if (e.status === "synthetic" && e.id === "system") continue; // openai: part of the head
    if (e.status !== "synthetic" && !SENT.includes(e.status)) continue;
    total += e.status === "synthetic" ? (e.id === "summary" ? ctx.usage.summary_tokens : 0) : e.tokens;
    if (total > cache.prefix_tokens) break;
    edge = { after: e.status === "synthetic" ? null : e.seq, total, label: e.status === "synthetic" ? `the ${e.id} message` : `#${e.seq}` };
  }
  return edge;
}
