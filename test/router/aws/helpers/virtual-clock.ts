import type { Clock } from '../../../../router/src/aws/throttling-retry';

/** Virtual time: sleeps return at once and move the clock; random is fixed so backoff delays are exact. */
export class VirtualClock implements Clock {
  t = Date.UTC(2026, 0, 1, 12, 0, 0);
  readonly sleeps: number[] = [];
  constructor(private readonly r = 0.5) {}
  now(): number {
    return this.t;
  }
  async sleep(ms: number, signal?: AbortSignal): Promise<void> {
    if (signal?.aborted) throw signal.reason;
    this.sleeps.push(ms);
    this.t += ms;
    await Promise.resolve();
    if (signal?.aborted) throw signal.reason;
  }
  random(): number {
    return this.r;
  }
}
