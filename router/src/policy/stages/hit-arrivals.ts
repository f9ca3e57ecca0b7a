/**
 * How often requests come back to what each instance caches: per instance, the times this router sent it a request
 * predicted to be served from its cache beyond the balance slack (a request bound to that instance: sending it
 * elsewhere would recompute more than the slack). Read as a rate over the last `windowMs`, it predicts how many such
 * requests arrive there while a long prefill runs (PredictedCostCandidates' cold placement). Pure state: times are
 * the caller's clock (RoutingSnapshot.nowMs); memory is bounded by the requests sent within one window.
 */
export class HitArrivals {
  /** Per instance: commit times within the window, oldest first (a queue: `head` is its first live entry). */
  private readonly times = new Map<string, { at: number[]; head: number }>();
  /** The first time recorded: a rate over a run younger than the window divides by its age, not the window. */
  private firstMs: number | undefined;

  constructor(readonly windowMs: number) {
    if (!(windowMs > 0)) throw new RangeError(`windowMs must be > 0 (got ${windowMs})`);
  }

  /** Records a request bound to `instance`, sent at `nowMs` (non-decreasing across calls). */
  record(instance: string, nowMs: number): void {
    if (this.firstMs === undefined) this.firstMs = nowMs;
    let queue = this.times.get(instance);
    if (queue === undefined) this.times.set(instance, (queue = { at: [], head: 0 }));
    queue.at.push(nowMs);
    this.prune(queue, nowMs);
  }

  /** Bound requests per millisecond sent to `instance` over the last window (or since the first record), at `nowMs`. */
  ratePerMs(instance: string, nowMs: number): number {
    const queue = this.times.get(instance);
    if (queue === undefined || this.firstMs === undefined) return 0;
    this.prune(queue, nowMs);
    const count = queue.at.length - queue.head;
    return count === 0 ? 0 : count / Math.max(1, Math.min(this.windowMs, nowMs - this.firstMs));
  }

  private prune(queue: { at: number[]; head: number }, nowMs: number): void {
    const since = nowMs - this.windowMs;
    while (queue.head < queue.at.length && queue.at[queue.head] <= since) queue.head++;
    // Compact once the dead prefix is most of the array, so the array stays within about twice the live entries.
    if (queue.head > 64 && queue.head * 2 > queue.at.length) {
      queue.at = queue.at.slice(queue.head);
      queue.head = 0;
    }
  }
}
