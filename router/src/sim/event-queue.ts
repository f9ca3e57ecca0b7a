/**
 * A min-heap of timed events. Events at the same time come out in insertion order, so a simulation that pushes
 * the same events in the same order always processes them in the same order.
 */
export class EventQueue<T> {
  private times: number[] = [];
  private seqs: number[] = [];
  private items: T[] = [];
  private counter = 0;

  get size(): number {
    return this.items.length;
  }

  push(timeMs: number, item: T): void {
    this.times.push(timeMs);
    this.seqs.push(this.counter++);
    this.items.push(item);
    this.siftUp(this.items.length - 1);
  }

  /** Time of the earliest event, or Infinity when empty. */
  peekTime(): number {
    return this.items.length === 0 ? Infinity : this.times[0];
  }

  pop(): { timeMs: number; item: T } | undefined {
    const n = this.items.length;
    if (n === 0) return undefined;
    const out = { timeMs: this.times[0], item: this.items[0] };
    const lastTime = this.times.pop()!;
    const lastSeq = this.seqs.pop()!;
    const lastItem = this.items.pop()!;
    if (n > 1) {
      this.times[0] = lastTime;
      this.seqs[0] = lastSeq;
      this.items[0] = lastItem;
      this.siftDown(0);
    }
    return out;
  }

  private before(a: number, b: number): boolean {
    return this.times[a] < this.times[b] || (this.times[a] === this.times[b] && this.seqs[a] < this.seqs[b]);
  }

  private swap(a: number, b: number): void {
    [this.times[a], this.times[b]] = [this.times[b], this.times[a]];
    [this.seqs[a], this.seqs[b]] = [this.seqs[b], this.seqs[a]];
    [this.items[a], this.items[b]] = [this.items[b], this.items[a]];
  }

  private siftUp(i: number): void {
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (!this.before(i, parent)) return;
      this.swap(i, parent);
      i = parent;
    }
  }

  private siftDown(i: number): void {
    const n = this.items.length;
    for (;;) {
      const l = 2 * i + 1;
      const r = l + 1;
      let m = i;
      if (l < n && this.before(l, m)) m = l;
      if (r < n && this.before(r, m)) m = r;
      if (m === i) return;
      this.swap(i, m);
      i = m;
    }
  }
}
