/**
 * Which engine runs next: an indexed binary min-heap of engine indices keyed by (when the engine next needs
 * running — its next step's start, or the end of a decode stretch it planned ahead — and its index), so the
 * simulator finds the earliest engine, and the second-earliest time, in O(1) and re-keys the one engine an event
 * touched in O(log n) — instead of asking every engine on every event. An engine with nothing to do is keyed
 * Infinity. Ties go to the lower index, as a scan in index order picks.
 */
export class EngineSchedule {
  /** heap[k] = engine index at heap position k. */
  private readonly heap: Int32Array;
  /** position[i] = heap position of engine i. */
  private readonly position: Int32Array;
  private readonly times: Float64Array;

  constructor(
    count: number,
    private readonly nextTimeMs: (engine: number) => number | undefined,
  ) {
    this.heap = new Int32Array(count);
    this.position = new Int32Array(count);
    this.times = new Float64Array(count);
    for (let i = 0; i < count; i++) {
      this.heap[i] = i;
      this.position[i] = i;
      this.times[i] = nextTimeMs(i) ?? Infinity;
    }
    for (let k = (count >> 1) - 1; k >= 0; k--) this.siftDown(k);
  }

  /** The engine whose next step starts first (lowest index among ties); -1 when every engine is idle. */
  first(): number {
    return this.heap.length === 0 || this.times[this.heap[0]] === Infinity ? -1 : this.heap[0];
  }

  /** Start of the earliest next step, or Infinity. */
  firstTime(): number {
    return this.heap.length === 0 ? Infinity : this.times[this.heap[0]];
  }

  /** Start of the earliest next step of any engine but `first()` (Infinity when there is none). */
  secondTime(): number {
    const n = this.heap.length;
    const left = n > 1 ? this.times[this.heap[1]] : Infinity;
    const right = n > 2 ? this.times[this.heap[2]] : Infinity;
    return left < right ? left : right;
  }

  /** Re-reads engine i's next step time (call after anything that may change it: a submit, a run). */
  update(engine: number): void {
    const t = this.nextTimeMs(engine) ?? Infinity;
    const old = this.times[engine];
    if (t === old) return;
    this.times[engine] = t;
    if (t < old) this.siftUp(this.position[engine]);
    else this.siftDown(this.position[engine]);
  }

  private before(a: number, b: number): boolean {
    const ta = this.times[a];
    const tb = this.times[b];
    return ta < tb || (ta === tb && a < b);
  }

  private place(k: number, engine: number): void {
    this.heap[k] = engine;
    this.position[engine] = k;
  }

  private siftUp(k: number): void {
    const engine = this.heap[k];
    while (k > 0) {
      const parent = (k - 1) >> 1;
      const p = this.heap[parent];
      if (!this.before(engine, p)) break;
      this.place(k, p);
      k = parent;
    }
    this.place(k, engine);
  }

  private siftDown(k: number): void {
    const n = this.heap.length;
    const engine = this.heap[k];
    for (;;) {
      const l = 2 * k + 1;
      if (l >= n) break;
      const r = l + 1;
      const at = r < n && this.before(this.heap[r], this.heap[l]) ? r : l;
      const child = this.heap[at];
      if (!this.before(child, engine)) break;
      this.place(k, child);
      k = at;
    }
    this.place(k, engine);
  }
}
