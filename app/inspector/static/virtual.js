// A virtualised list: only the rows near the viewport are in the DOM, so 50,000 messages cost
// what a screenful costs. Rows have their own heights: each is measured once mounted (and
// again when it resizes, e.g. a <details> opened), then the list is laid out again: the
// offsets and the total height, and the rows after it moved down.
const OVERSCAN_PX = 600;

export class VirtualList {
  constructor({ label, estimate = 84, render }) {
    this.estimate = estimate;
    this.render = render; // (item, index) → element
    this.items = [];
    this.heights = new Map(); // item key → measured px
    this.offsets = new Float64Array(1);
    this.mounted = new Map(); // key → element
    this.inner = document.createElement("div");
    this.inner.className = "vlist-inner";
    this.inner.setAttribute("role", "list");
    this.inner.setAttribute("aria-label", label);
    this.root = document.createElement("div");
    this.root.className = "vlist";
    this.root.tabIndex = 0; // scrollable with the keyboard
    this.root.setAttribute("aria-label", `${label} (scrollable)`);
    this.root.append(this.inner);
    this.root.addEventListener("scroll", () => this.schedule());
    this.stale = false; // a height changed since the offsets were laid out
    this.resized = new ResizeObserver((entries) => {
      for (const entry of entries) this.stale = this.measure(entry.target) || this.stale;
      if (this.stale) this.schedule();
    });
  }

  setItems(items) {
    this.items = items;
    this.layout();
    this.paint(true);
  }

  refresh() {
    this.paint(true);
  }

  indexOf(key) {
    return this.items.findIndex((item) => item.key === key);
  }

  scrollToIndex(index) {
    if (index < 0) return null;
    this.root.scrollTop = Math.max(0, this.offsets[index] - this.root.clientHeight / 3);
    this.paint(false);
    return this.mounted.get(this.items[index].key) || null;
  }

  schedule() {
    if (this.frame) return;
    this.frame = requestAnimationFrame(() => {
      this.frame = 0;
      this.paint(false);
    });
  }

  layout() {
    this.stale = false;
    const n = this.items.length;
    if (this.offsets.length !== n + 1) this.offsets = new Float64Array(n + 1);
    let at = 0;
    for (let i = 0; i < n; i++) {
      this.offsets[i] = at;
      at += this.heights.get(this.items[i].key) ?? this.estimate;
    }
    this.offsets[n] = at;
    this.inner.style.height = `${at}px`;
  }

  measure(node) {
    const key = node.dataset.key;
    const height = node.offsetHeight + 8; // the gap between rows
    if (!node.isConnected || this.heights.get(key) === height) return false;
    this.heights.set(key, height);
    return true;
  }

  firstVisible(top) {
    let lo = 0;
    let hi = this.items.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (this.offsets[mid + 1] <= top) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  // The first row in view stays where it is while the rows above it change height.
  relayout(anchor, anchorShift) {
    this.layout();
    this.root.scrollTop = (this.offsets[anchor] || 0) + anchorShift;
  }

  paint(rebuild) {
    // The anchor is read from the offsets the rows are drawn at, before any new layout.
    const anchor = this.firstVisible(this.root.scrollTop);
    const anchorShift = this.root.scrollTop - (this.offsets[anchor] || 0);
    if (this.stale) this.relayout(anchor, anchorShift); // a mounted row resized (a <details> opened)
    for (let pass = 0; pass < 3; pass++) {
      const top = this.root.scrollTop - OVERSCAN_PX;
      const bottom = this.root.scrollTop + this.root.clientHeight + OVERSCAN_PX;
      const wanted = new Map();
      for (let i = this.firstVisible(Math.max(0, top)); i < this.items.length && this.offsets[i] < bottom; i++) {
        wanted.set(this.items[i].key, i);
      }
      for (const [key, node] of this.mounted) {
        if (rebuild || !wanted.has(key)) {
          this.resized.unobserve(node);
          node.remove();
          this.mounted.delete(key);
        }
      }
      let changed = false;
      for (const [key, index] of wanted) {
        let node = this.mounted.get(key);
        if (!node) {
          node = this.render(this.items[index], index);
          node.dataset.key = key;
          node.setAttribute("role", "listitem");
          node.setAttribute("aria-posinset", String(index + 1));
          node.setAttribute("aria-setsize", String(this.items.length));
          this.inner.append(node);
          this.mounted.set(key, node);
          this.resized.observe(node);
        }
        node.style.transform = `translateY(${this.offsets[index]}px)`;
        changed = this.measure(node) || changed;
      }
      rebuild = false;
      if (!changed) break;
      this.relayout(anchor, anchorShift);
    }
  }
}
