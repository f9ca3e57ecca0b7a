import type { LiveProgress } from '../report/progress';
import type { SimulationProgress } from './simulator';

/**
 * Progress of a comparison's strategies (run one by one or on worker threads) folded into one line for the
 * live benchmark's ProgressReporter: requests sent and finished over every strategy, and the part done —
 * by virtual time against the send window when there is one, else by requests finished against the
 * workload's expected count. Quiet for the first `quietMs` of wall time, so short runs print no bar.
 */
export interface SimulationProgressBoardOptions {
  readonly strategies: number;
  /** Requests each strategy is expected to send (workload estimate, capped by maxRequests). */
  readonly expectedPerStrategy: number;
  /** Whether that count is exact (not a Poisson estimate). */
  readonly expectedExact: boolean;
  /** The send window in virtual ms, when the run has one. */
  readonly sendUntilMs?: number;
  /** Receives the folded progress (e.g. ProgressReporter.update). */
  readonly report: (progress: LiveProgress) => void;
  /** Wall clock in ms (injected for tests). */
  readonly now?: () => number;
  /** Wall time before the first report (default 3 s). */
  readonly quietMs?: number;
}

export class SimulationProgressBoard {
  private readonly latest: (SimulationProgress | undefined)[];
  private readonly done: boolean[];
  private readonly now: () => number;
  private readonly startedAt: number;
  private reported = false;

  constructor(private readonly options: SimulationProgressBoardOptions) {
    this.latest = new Array<SimulationProgress | undefined>(options.strategies).fill(undefined);
    this.done = new Array<boolean>(options.strategies).fill(false);
    this.now = options.now ?? (() => performance.now());
    this.startedAt = this.now();
  }

  /** A strategy's simulator reported progress. */
  progress(index: number, progress: SimulationProgress): void {
    this.latest[index] = progress;
    this.emit(false);
  }

  /** A strategy finished after sending `sent` requests, `failed` of them refused (its report's errors). */
  strategyDone(index: number, sent: number, failed: number): void {
    const last = this.latest[index];
    this.latest[index] = {
      simulatedMs: last?.simulatedMs ?? 0,
      sent,
      finished: sent,
      failed,
      expected: last?.expected ?? sent,
    };
    this.done[index] = true;
    this.emit(this.done.every((d) => d));
  }

  private fractionOf(index: number): number {
    if (this.done[index]) return 1;
    const p = this.latest[index];
    if (p === undefined) return 0;
    const { sendUntilMs, expectedPerStrategy } = this.options;
    if (sendUntilMs !== undefined && sendUntilMs > 0 && Number.isFinite(sendUntilMs))
      return Math.min(1, p.simulatedMs / sendUntilMs);
    return expectedPerStrategy > 0 ? Math.min(1, p.finished / expectedPerStrategy) : 0;
  }

  private emit(allDone: boolean): void {
    const wallMs = this.now() - this.startedAt;
    if (!this.reported && (allDone || wallMs < (this.options.quietMs ?? 3000))) return;
    this.reported = true;
    let sent = 0;
    let finished = 0;
    let failed = 0;
    let fraction = 0;
    for (let i = 0; i < this.latest.length; i++) {
      sent += this.latest[i]?.sent ?? 0;
      finished += this.latest[i]?.finished ?? 0;
      failed += this.latest[i]?.failed ?? 0;
      fraction += this.fractionOf(i);
    }
    const expected = Number.isFinite(this.options.expectedPerStrategy)
      ? this.options.expectedPerStrategy * this.options.strategies
      : null;
    this.options.report({
      phase: allDone ? 'done' : 'measuring',
      wallMs,
      modelMs: Math.max(0, ...this.latest.map((p) => p?.simulatedMs ?? 0)),
      sent,
      finished,
      failed,
      inFlight: sent - finished,
      expected: expected === null ? null : Math.round(expected),
      expectedExact: this.options.expectedExact,
      fraction: fraction / this.latest.length,
    });
  }
}
