// A session's stored messages, read a page at a time (GET …/messages) as the list needs them,
// and the tool calls and results they hold, for the links between them.
import { api } from "./api.js";
import { callIds, resultIds } from "./blocks.js";
import { sid } from "./context.js";

const PAGE = 200; // messages per read

export class MessageStore {
  constructor(id, onLoad) {
    this.id = id;
    this.onLoad = onLoad;
    this.bySeq = new Map();
    this.pages = new Map(); // page start → promise
    this.calls = new Map(); // tool call id → seq of the message making it
    this.results = new Map(); // tool call id → seq of the message answering it
  }

  page(seq) {
    const start = Math.floor((seq - 1) / PAGE) * PAGE;
    if (!this.pages.has(start)) {
      const read = api(`/sessions/${sid(this.id)}/messages`, { params: { after_seq: start, limit: PAGE } }).then((page) => {
        for (const m of page.messages) {
          this.bySeq.set(m.seq, m);
          for (const c of callIds(m)) this.calls.set(c, m.seq);
          for (const r of resultIds(m)) this.results.set(r, m.seq);
        }
        for (let s = start + 1; s <= start + PAGE; s++) if (!this.bySeq.has(s)) this.bySeq.set(s, null); // removed
        this.onLoad();
      });
      this.pages.set(start, read);
    }
    return this.pages.get(start);
  }

  async all(seqs, progress) {
    const starts = [...new Set(seqs.map((s) => Math.floor((s - 1) / PAGE) * PAGE))];
    for (let i = 0; i < starts.length; i++) {
      await this.page(starts[i] + 1);
      progress(i + 1, starts.length);
    }
  }
}
