/**
 * Delay before restarting an engine that exited: `initialMs`, doubled per consecutive quick failure, at most
 * `maxMs`. A run that lasted at least `stableAfterMs` counts as a success and resets the delay, so an engine
 * that crashes once a day restarts at once while one that crashes on start does not spin.
 */
export class RestartBackoff {
  private failures = 0;

  constructor(
    readonly initialMs: number,
    readonly maxMs: number,
    readonly stableAfterMs: number = 60_000,
  ) {}

  /** Records an exit after a run of `ranMs` and returns the delay before the next start. */
  nextDelay(ranMs: number): number {
    if (ranMs >= this.stableAfterMs) this.failures = 0;
    const delay = Math.min(this.maxMs, this.initialMs * 2 ** Math.min(this.failures, 30));
    this.failures++;
    return delay;
  }
}
