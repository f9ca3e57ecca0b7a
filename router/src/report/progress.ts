/** Where a run is: warm-up (not measured), measuring, draining in-flight requests after the last send, done. */
export type LivePhase = 'warmup' | 'measuring' | 'draining' | 'done';

/** A live or simulated run's progress, as the terminal progress line and board show it. */
export interface LiveProgress {
  readonly phase: LivePhase;
  readonly wallMs: number;
  /** Model time since the first send (wallMs × timeScale). */
  readonly modelMs: number;
  readonly sent: number;
  readonly finished: number;
  readonly failed: number;
  readonly inFlight: number;
  /** Requests the run is expected to send (workload estimate capped by maxRequests); null when unknown. */
  readonly expected: number | null;
  /** False when `expected` is an estimate (Poisson arrivals): the run may send a few more or fewer. */
  readonly expectedExact: boolean;
  /** Best estimate of the part done, 0–1 (by requests finished or by duration); null when unknown. */
  readonly fraction: number | null;
}

/**
 * Progress of a long live run on stderr: a one-line bar redrawn in place on a terminal, a plain line every
 * few seconds otherwise (CI logs, files), or nothing. Formatting is pure; the reporter only decides when and
 * how to write.
 */
export type ProgressMode = 'auto' | 'bar' | 'lines' | 'silent';

export interface ProgressStream {
  write(text: string): unknown;
  readonly isTTY?: boolean;
  readonly columns?: number;
}

export interface ProgressReporterOptions {
  readonly stream?: ProgressStream;
  /** auto: a bar on a TTY, lines otherwise. Default auto. */
  readonly mode?: ProgressMode;
  /** Lines mode: wall milliseconds between lines. Default 10 s. */
  readonly lineIntervalMs?: number;
  /** Prefix of every line, e.g. the run's label. */
  readonly label?: string;
}

/** `1h02m`, `3m05s`, `12s`. */
export function formatDuration(ms: number): string {
  const s = Math.max(0, Math.round(ms / 1000));
  if (s >= 3600) return `${Math.floor(s / 3600)}h${String(Math.floor((s % 3600) / 60)).padStart(2, '0')}m`;
  if (s >= 60) return `${Math.floor(s / 60)}m${String(s % 60).padStart(2, '0')}s`;
  return `${s}s`;
}

/** Finished requests per wall second so far; null before any time has passed. */
export function finishRate(p: LiveProgress): number | null {
  return p.wallMs > 0 ? (p.finished * 1000) / p.wallMs : null;
}

/** Wall time left, extrapolated from the part done; null when unknown or nothing is done yet. */
export function etaMs(p: LiveProgress): number | null {
  if (p.phase === 'done') return 0;
  if (p.fraction === null || p.fraction <= 0) return null;
  return (p.wallMs * (1 - p.fraction)) / p.fraction;
}

/** The counters part of a progress line. */
export function progressText(p: LiveProgress): string {
  const rate = finishRate(p);
  const eta = etaMs(p);
  const expected = p.expected === null ? '' : `/${p.expectedExact ? '' : '≈'}${p.expected}`;
  return [
    `sent ${p.sent}${expected}`,
    `done ${p.finished}`,
    `errors ${p.failed}`,
    `in flight ${p.inFlight}`,
    rate === null ? undefined : `${rate.toFixed(1)} req/s`,
    `elapsed ${formatDuration(p.wallMs)}`,
    eta === null || p.phase === 'done' ? undefined : `ETA ${formatDuration(eta)}`,
    p.phase,
  ]
    .filter((x) => x !== undefined)
    .join(' · ');
}

/** `[#####·····]  45% ` followed by the counters; `width` is the bar's inside width. */
export function progressBar(p: LiveProgress, width = 24): string {
  const fraction = p.fraction ?? 0;
  const filled = Math.round(Math.min(1, Math.max(0, fraction)) * width);
  const percent = p.fraction === null ? '  ?%' : `${String(Math.floor(fraction * 100)).padStart(3)}%`;
  return `[${'#'.repeat(filled)}${'·'.repeat(width - filled)}] ${percent} ${progressText(p)}`;
}

export class ProgressReporter {
  private readonly stream: ProgressStream;
  private readonly mode: Exclude<ProgressMode, 'auto'>;
  private readonly lineIntervalMs: number;
  private readonly prefix: string;
  private lastLineAt = -Infinity;
  private drawn = false;

  constructor(options: ProgressReporterOptions = {}) {
    this.stream = options.stream ?? process.stderr;
    const mode = options.mode ?? 'auto';
    this.mode = mode === 'auto' ? (this.stream.isTTY ? 'bar' : 'lines') : mode;
    this.lineIntervalMs = options.lineIntervalMs ?? 10_000;
    this.prefix = options.label === undefined ? '' : `${options.label}: `;
  }

  /** Pass as runLiveBenchmark's onProgress. */
  readonly update = (p: LiveProgress): void => {
    if (this.mode === 'silent') return;
    if (this.mode === 'bar') {
      const columns = this.stream.columns ?? 100;
      const line = `${this.prefix}${progressBar(p)}`.slice(0, Math.max(20, columns - 1));
      this.stream.write(`\r\x1b[2K${line}`);
      this.drawn = true;
      if (p.phase === 'done') this.end();
      return;
    }
    if (p.phase !== 'done' && p.wallMs - this.lastLineAt < this.lineIntervalMs) return;
    this.lastLineAt = p.wallMs;
    this.stream.write(`${this.prefix}${progressText(p)}\n`);
  };

  /** Ends the bar's line (call once the run is over, also after an error). */
  end(): void {
    if (this.mode === 'bar' && this.drawn) this.stream.write('\n');
    this.drawn = false;
  }
}
