import { performance } from 'node:perf_hooks';
import { CeilingTracker, type Ceilings } from '../report/ceilings';
import { percentileOfSorted, sortedAscending } from '../report/stats';
import type { PrometheusCacheDeltas, StrategyId, StrategyRunInput } from '../report/report-model';
import type { RequestRecord } from '../report/request-record';
import { RequestFeed } from '../feed/request-feed';
import { renderedPromptOf } from '../feed/workload-routing';
import type { LoadShape } from '../workload/load-shape';
import { openAiPath, toOpenAiBody, type WorkloadRequest } from '../workload/workload-request';
import { BackendMetricsScraper, cacheDeltas, type BackendCacheDelta, type CacheScrape } from './backend-metrics';
import {
  resolveLiveOptions,
  type LiveBenchmarkOptions,
  type LivePhase,
  type LiveProgress,
  type ResolvedLiveOptions,
} from './live-benchmark-options';
import type { CancelCode } from '../common/request-errors';
import { plannedRequests } from './planned-requests';
import { discoverModel } from './served-model';
import type { RequestTransport } from './request-transport';
import { StreamingClient, type StreamOutcome } from './streaming-client';

/** Why a live run ended: the workload ran out, maxRequests or durationMs was reached, stopSignal fired (stop sending, let in-flight requests finish) or signal fired (cancel them too). */
export type StopReason = 'completed' | 'max-requests' | 'duration' | 'stopped' | 'aborted';

/** A RequestRecord plus what only a live run knows. Times are model time (wall × timeScale) from the first send. */
export interface LiveRequestRecord extends RequestRecord {
  /** The workload's planned arrival (open loop: the send time the driver aimed at). */
  readonly arrivalMs: number;
  /** HTTP status of the answer; null when none arrived. */
  readonly httpStatus: number | null;
  /** The answer carried usage.prompt_tokens_details.cached_tokens. */
  readonly cachedTokensReported: boolean;
}

export interface LiveBenchmarkResult {
  /** One per request sent, in send order. */
  readonly records: readonly LiveRequestRecord[];
  /** Measured window in model time: [warm-up end, last completion]. */
  readonly window: { readonly startMs: number; readonly endMs: number };
  /** Σ Δ vllm:prefix_cache_queries / hits over the window, when every backend was scraped twice. */
  readonly prometheus?: PrometheusCacheDeltas;
  /**
   * Hit-rate ceilings of the requests sent in the measured window, when `ceilings` was given. Warm-up requests
   * fill the ceilings' caches first but are not counted, as they are not in the measured hit rate.
   */
  readonly ceilings?: Ceilings;
  /** Per backend metrics URL (empty when none were given). */
  readonly backendMetrics: readonly BackendCacheDelta[];
  /** Values of the instance header seen on answers, sorted. */
  readonly instancesSeen: readonly string[];
  readonly wallMs: number;
  readonly sent: number;
  readonly failed: number;
  readonly stopReason: StopReason;
  readonly model: string;
  readonly url: string;
  readonly timeScale: number;
  readonly load: LoadShape;
  /** Most requests the client had in flight at once. */
  readonly peakInFlight: number;
  /** Open loop: the latest a request left after its planned time (model ms); 0 for closed loop. */
  readonly maxSendLagMs: number;
  /** Facts the report must carry (time scale, warm-up, stop reason, missing counters…). */
  readonly notes: readonly string[];
}

/**
 * Runs one live benchmark: drives a workload against an OpenAI-compatible server in wall time, with the same
 * RequestFeed the simulator uses in virtual time, so both send the same requests in the same order (open
 * loop at the workload's arrival times, closed loop at a fixed concurrency, multi-turn dependencies honoured
 * in both). Every request sent ends as exactly one record, success or error.
 * Throws LiveBenchmarkOptionsError on bad options and ModelDiscoveryError when no model is given or found.
 */
export async function runLiveBenchmark(options: LiveBenchmarkOptions): Promise<LiveBenchmarkResult> {
  const resolved = resolveLiveOptions(options);
  const model = resolved.model ?? (await discoverModel(resolved.target, { headers: resolved.headers }));
  return new LiveRun(resolved, model, options).run();
}

/** The result as one strategy run of a report (see buildReport). `instances`: every configured instance id, so idle ones show. */
export function toStrategyRun(
  result: LiveBenchmarkResult,
  strategy: StrategyId | string,
  instances: readonly string[] = [],
  label?: string,
): StrategyRunInput {
  const id: StrategyId = typeof strategy === 'string' ? { name: strategy } : strategy;
  const all = [...instances];
  for (const seen of result.instancesSeen) if (!all.includes(seen)) all.push(seen);
  const { startMs, endMs } = result.window;
  if (result.records.length > 0 && !(endMs > startMs)) {
    throw new RangeError(
      `nothing was measured: the run ended at ${Math.round(endMs)} ms of model time, before the warm-up ended; shorten the warm-up`,
    );
  }
  // A server that never reports cached_tokens (vLLM without --enable-prompt-tokens-details) would read as a
  // 0 % hit rate; leaving prompt tokens out makes the report show "unknown" instead.
  const cachedReported = result.records.some((r) => r.cachedTokensReported);
  const records: RequestRecord[] = cachedReported
    ? [...result.records]
    : result.records.map(({ promptTokens: _p, cachedPromptTokens: _c, ...rest }) => rest);
  return {
    strategy: id,
    label,
    instances: all,
    records,
    window: result.records.length > 0 ? { startMs, endMs } : undefined,
    prometheus: result.prometheus,
    ...(result.ceilings !== undefined ? { ceilings: result.ceilings } : {}),
  };
}

/** The default transport: the streaming HTTP client, to the request's OpenAI path under the target URL. */
function httpTransport(client: StreamingClient): RequestTransport {
  return {
    send: (request, body, options) => client.send(openAiPath(request), body, options),
    close: () => client.close(),
  };
}

interface InFlight {
  readonly controller: AbortController;
}

class LiveRun {
  private readonly feed: RequestFeed;
  private readonly client: RequestTransport;
  private readonly scraper: BackendMetricsScraper | undefined;
  private readonly ceilings: CeilingTracker | undefined;
  private readonly timeScale: number;
  private readonly inFlight = new Map<string, InFlight>();
  private readonly pending = new Set<Promise<void>>();
  private readonly records: LiveRequestRecord[] = [];
  private readonly instances = new Set<string>();
  private t0 = 0;
  private sent = 0;
  private finished = 0;
  private failed = 0;
  private peakInFlight = 0;
  private maxSendLagMs = 0;
  /** Open loop: how late each scheduled send left (model ms), for the notes. */
  private readonly sendLags: number[] = [];
  /** Warm-up requests fill the ceilings' caches but are not counted, as they are not in the measured hit rate. */
  private ceilingWarmupEnded = false;
  private phase: LivePhase = 'warmup';
  /** No new request is sent once true. */
  private stopped = false;
  private stopReason: StopReason | undefined;
  private arrivalsDone = false;
  private draining = false;
  private drainTimer: NodeJS.Timeout | undefined;
  private warmupTimer: NodeJS.Timeout | undefined;
  private durationTimer: NodeJS.Timeout | undefined;
  private progressTimer: NodeJS.Timeout | undefined;
  private wakeSleeper: (() => void) | undefined;
  private resolveDone: (() => void) | undefined;
  private windowScrape: Promise<CacheScrape[]> | undefined;

  constructor(
    private readonly options: ResolvedLiveOptions,
    private readonly model: string,
    private readonly callbacks: Pick<LiveBenchmarkOptions, 'signal' | 'stopSignal' | 'onProgress' | 'transport'>,
  ) {
    this.timeScale = options.timeScale;
    this.feed = new RequestFeed(options.workload.requests(), options.load, options.maxRequests);
    this.client =
      callbacks.transport ??
      httpTransport(
        new StreamingClient({
          target: options.target,
          connections: options.maxConnections,
          instanceHeader: options.instanceHeader,
          headers: options.headers,
        }),
      );
    this.ceilings = options.ceilings === undefined ? undefined : new CeilingTracker(options.ceilings);
    this.scraper =
      options.backendMetricsUrls.length > 0
        ? new BackendMetricsScraper(options.backendMetricsUrls, options.scrapeTimeoutMs)
        : undefined;
  }

  async run(): Promise<LiveBenchmarkResult> {
    const { signal, stopSignal } = this.callbacks;
    const onAbort = (): void => this.abort();
    const onStop = (): void => this.stopSending('stopped');
    try {
      if (this.options.warmupMs === 0) {
        this.phase = 'measuring';
        if (this.scraper) this.windowScrape = Promise.resolve(await this.scraper.scrapeAll());
      }
      const done = new Promise<void>((resolve) => (this.resolveDone = resolve));
      this.t0 = performance.now();
      signal?.addEventListener('abort', onAbort, { once: true });
      stopSignal?.addEventListener('abort', onStop, { once: true });
      if (signal?.aborted) this.abort();
      if (stopSignal?.aborted) this.stopSending('stopped');
      this.startTimers();
      if (this.feed.isOpenLoop) void this.openLoop();
      else this.fillClosedLoop();
      this.checkDone();
      await done;
      while (this.pending.size > 0) await Promise.all(this.pending);
      const wallMs = performance.now() - this.t0;
      this.phase = 'done';
      this.clearTimers();
      const deltas = this.scraper
        ? cacheDeltas((await this.windowScrape) ?? [], await this.scraper.scrapeAll())
        : undefined;
      this.callbacks.onProgress?.(this.progress());
      return this.result(wallMs, deltas);
    } finally {
      this.clearTimers();
      signal?.removeEventListener('abort', onAbort);
      stopSignal?.removeEventListener('abort', onStop);
      await this.client.close();
      await this.scraper?.close();
    }
  }

  // ---- clocks

  private modelNow(): number {
    return (performance.now() - this.t0) * this.timeScale;
  }

  private wallDelay(modelMs: number): number {
    return Math.max(0, modelMs / this.timeScale);
  }

  private startTimers(): void {
    const { warmupMs, durationMs, progressIntervalMs } = this.options;
    if (warmupMs > 0) {
      this.warmupTimer = setTimeout(() => {
        if (this.phase === 'warmup') this.phase = this.draining ? 'draining' : 'measuring';
        if (this.scraper) this.windowScrape = this.scraper.scrapeAll();
      }, this.wallDelay(warmupMs));
    }
    // Open loops stop by planned arrival time (the arrival loop and finish() check it), so a busy event loop
    // cannot drop an arrival planned before the end. Closed loops send on completions and need the timer to
    // stop when none comes.
    if (Number.isFinite(durationMs) && !this.feed.isOpenLoop) {
      // Once the workload is exhausted the duration no longer stops anything (and is not why the run ended).
      this.durationTimer = setTimeout(() => {
        if (!this.feed.done) this.stopSending('duration');
      }, this.wallDelay(durationMs));
    }
    if (this.callbacks.onProgress) {
      this.progressTimer = setInterval(() => this.callbacks.onProgress?.(this.progress()), progressIntervalMs);
      this.progressTimer.unref?.();
    }
  }

  private clearTimers(): void {
    for (const t of [this.drainTimer, this.warmupTimer, this.durationTimer]) if (t !== undefined) clearTimeout(t);
    if (this.progressTimer !== undefined) clearInterval(this.progressTimer);
    this.drainTimer = this.warmupTimer = this.durationTimer = this.progressTimer = undefined;
  }

  // ---- sending

  private async openLoop(): Promise<void> {
    for (;;) {
      if (this.stopped) break;
      const next = this.feed.nextArrival();
      if (next === undefined) break;
      if (next.arrivalMs >= this.options.durationMs) {
        this.stopSending('duration');
        break;
      }
      const due = this.t0 + next.arrivalMs / this.timeScale;
      // Timers run on a millisecond loop clock and may fire a fraction of a millisecond early: wait again
      // until the monotonic clock has passed the planned time, so no request leaves before it.
      while (!this.stopped && performance.now() < due) await this.sleepUntil(due);
      if (this.stopped) break;
      const lag = (performance.now() - due) * this.timeScale;
      this.maxSendLagMs = Math.max(this.maxSendLagMs, lag);
      this.sendLags.push(lag);
      if (this.feed.release(next)) this.send(next);
    }
    this.arrivalsDone = true;
    this.beginDrain();
    this.checkDone();
  }

  private sleepUntil(wallTime: number): Promise<void> {
    return new Promise((resolve) => {
      const left = wallTime - performance.now();
      // Under a millisecond: yield to I/O and check again rather than oversleep by up to a millisecond.
      const handle = left >= 1 ? setTimeout(wake, left) : setImmediate(wake);
      function wake(): void {
        if (left >= 1) clearTimeout(handle as NodeJS.Timeout);
        else clearImmediate(handle as NodeJS.Immediate);
        resolve();
      }
      this.wakeSleeper = wake;
    });
  }

  private fillClosedLoop(): void {
    const concurrency = (this.options.load as { concurrency: number }).concurrency;
    while (!this.stopped && this.inFlight.size < concurrency) {
      if (this.modelNow() >= this.options.durationMs) {
        this.stopSending('duration');
        return;
      }
      const next = this.feed.nextSendable();
      if (next === undefined) break;
      this.send(next);
    }
    if (this.feed.done) this.beginDrain();
  }

  private send(request: WorkloadRequest): void {
    const body = JSON.stringify(
      toOpenAiBody(request, { model: this.model, stream: true, includeUsage: true, ignoreEos: this.options.ignoreEos }),
    );
    const controller = new AbortController();
    this.inFlight.set(request.id, { controller });
    this.sent++;
    this.peakInFlight = Math.max(this.peakInFlight, this.inFlight.size);
    const startedAt = performance.now();
    const p = this.client
      .send(request, body, {
        timeoutMs: this.wallDelay(this.options.requestTimeoutMs),
        signal: controller.signal,
        startedAt,
      })
      .then((outcome) => this.finish(request, outcome));
    this.pending.add(p);
    void p.finally(() => this.pending.delete(p));
    // After the request is on its way, so hashing the prompt never delays a send.
    if (this.ceilings !== undefined) {
      if (!this.ceilingWarmupEnded && (startedAt - this.t0) * this.timeScale >= this.options.warmupMs) {
        this.ceilings.endWarmup();
        this.ceilingWarmupEnded = true;
      }
      this.ceilings.observe(renderedPromptOf(request));
    }
  }

  private finish(request: WorkloadRequest, outcome: StreamOutcome): void {
    this.inFlight.delete(request.id);
    this.finished++;
    if (outcome.error !== undefined) this.failed++;
    if (outcome.instance !== null) this.instances.add(outcome.instance);
    this.records.push(this.recordOf(request, outcome));
    // A failed turn still completes: its conversation must not stall.
    for (const released of this.feed.complete(request.id)) {
      if (this.stopped) break;
      if (this.modelNow() >= this.options.durationMs) {
        this.stopSending('duration');
        break;
      }
      this.send(released);
    }
    if (!this.feed.isOpenLoop) this.fillClosedLoop();
    this.checkDone();
  }

  private recordOf(request: WorkloadRequest, o: StreamOutcome): LiveRequestRecord {
    const n = this.timeScale;
    const usage = o.usage;
    const outputTokens =
      usage?.completionTokens ?? (o.generatedEvents > 0 || o.error === undefined ? o.generatedEvents : undefined);
    return {
      id: request.id,
      instance: o.instance,
      sentAtMs: (o.startedAt - this.t0) * n,
      ttftMs: o.firstTokenAt === null ? null : (o.firstTokenAt - o.startedAt) * n,
      e2eMs: (o.endedAt - o.startedAt) * n,
      ...(usage?.promptTokens !== undefined ? { promptTokens: usage.promptTokens } : {}),
      ...(usage?.cachedTokens !== undefined ? { cachedPromptTokens: usage.cachedTokens } : {}),
      ...(outputTokens !== undefined ? { outputTokens } : {}),
      // Decision time is the router's own CPU time: not scaled, emulators or not.
      ...(o.decisionMicros !== undefined ? { decisionMicros: o.decisionMicros } : {}),
      ...(o.decisionReason !== undefined ? { reason: o.decisionReason } : {}),
      ...(o.predictedCachedTokens !== undefined ? { predictedCachedTokens: o.predictedCachedTokens } : {}),
      ...(o.error !== undefined ? { error: o.error } : {}),
      ...(o.errorDetail !== undefined ? { errorDetail: o.errorDetail } : {}),
      ...(request.priority !== undefined ? { priority: request.priority } : {}),
      arrivalMs: request.arrivalMs,
      httpStatus: o.status,
      cachedTokensReported: usage?.cachedTokens !== undefined,
    };
  }

  // ---- stopping

  private stopSending(reason: StopReason): void {
    if (reason === 'aborted') this.stopReason = 'aborted';
    if (this.stopped) return;
    this.stopped = true;
    this.stopReason ??= reason;
    this.wakeSleeper?.();
    this.beginDrain();
    this.checkDone();
  }

  /** Nothing more is scheduled: in-flight requests get the drain time, then are cancelled. */
  private beginDrain(): void {
    if (this.draining) return;
    this.draining = true;
    if (this.phase !== 'warmup') this.phase = 'draining';
    this.drainTimer = setTimeout(
      () => this.cancelInFlight('drain_timeout'),
      this.wallDelay(this.options.drainTimeoutMs),
    );
  }

  private abort(): void {
    this.stopSending('aborted');
    this.cancelInFlight('aborted');
  }

  private cancelInFlight(code: CancelCode): void {
    this.stopped = true;
    for (const { controller } of this.inFlight.values()) controller.abort(code);
  }

  private checkDone(): void {
    if (this.inFlight.size > 0 || this.resolveDone === undefined) return;
    // Closed loop: called right after a fill that found nothing to send, so nothing more will come. Open
    // loop: the arrival loop may still be waiting for the next arrival.
    if (this.feed.isOpenLoop && !this.arrivalsDone && !this.stopped) return;
    const resolve = this.resolveDone;
    this.resolveDone = undefined;
    resolve();
  }

  // ---- reporting

  private progress(): LiveProgress {
    const modelMs = this.phase === 'done' ? this.lastEndMs() : this.modelNow();
    const planned = plannedRequests(this.options.workload, this.options, { sent: this.sent, modelMs });
    const expected = planned.expected;
    const fractions: number[] = [];
    if (expected !== null) fractions.push(this.finished / expected);
    if (Number.isFinite(this.options.durationMs)) fractions.push(modelMs / this.options.durationMs);
    return {
      phase: this.phase,
      wallMs: performance.now() - this.t0,
      modelMs,
      sent: this.sent,
      finished: this.finished,
      failed: this.failed,
      inFlight: this.inFlight.size,
      expected,
      expectedExact: planned.exact,
      fraction: this.phase === 'done' ? 1 : fractions.length === 0 ? null : Math.min(1, Math.max(...fractions)),
    };
  }

  private lastEndMs(): number {
    let end = 0;
    for (const r of this.records) end = Math.max(end, r.sentAtMs + r.e2eMs);
    return end;
  }

  private result(wallMs: number, deltas: ReturnType<typeof cacheDeltas> | undefined): LiveBenchmarkResult {
    const records = [...this.records].sort((a, b) => a.sentAtMs - b.sentAtMs);
    const endMs = this.lastEndMs();
    const stopReason: StopReason =
      this.stopReason ?? (this.feed.issuedCount >= this.options.maxRequests ? 'max-requests' : 'completed');
    return {
      records,
      window: { startMs: Math.min(this.options.warmupMs, endMs), endMs },
      prometheus: deltas?.total,
      ...(this.ceilings !== undefined ? { ceilings: this.measuredCeilings(this.ceilings) } : {}),
      backendMetrics: deltas?.perBackend ?? [],
      instancesSeen: [...this.instances].sort(),
      wallMs,
      sent: this.sent,
      failed: this.failed,
      stopReason,
      model: this.model,
      url: this.options.target.display,
      timeScale: this.timeScale,
      load: this.options.load,
      peakInFlight: this.peakInFlight,
      maxSendLagMs: this.maxSendLagMs,
      notes: this.notes(records, stopReason, deltas?.notes ?? []),
    };
  }

  /** The ceilings of the requests sent in the window (the tracker's caches saw the warm-up too). */
  private measuredCeilings(tracker: CeilingTracker): Ceilings {
    // A run that never left its warm-up measured nothing.
    if (!this.ceilingWarmupEnded) tracker.endWarmup();
    return tracker.result();
  }

  private notes(
    records: readonly LiveRequestRecord[],
    stopReason: StopReason,
    metricNotes: readonly string[],
  ): string[] {
    const o = this.options;
    const notes: string[] = [];
    const seconds = (ms: number): string => `${+(ms / 1000).toFixed(3)} s`;
    if (this.timeScale !== 1) {
      notes.push(
        `Time scale ${this.timeScale}: the servers run ${this.timeScale}× faster than real time, so arrival gaps were divided by ${this.timeScale} ` +
          `and every measured duration multiplied by ${this.timeScale}; times are model time. Network and client overhead is scaled too, so it is overstated ${this.timeScale}×.`,
      );
    }
    if (o.warmupMs > 0)
      notes.push(
        `Warm-up: requests sent in the first ${seconds(o.warmupMs)} ran but are left out of latency and hit rate.`,
      );
    const stops: Record<StopReason, string> = {
      completed: 'every request of the workload was sent',
      'max-requests': `the request limit (${o.maxRequests}) was reached`,
      duration: `sending stopped at the duration limit (${seconds(o.durationMs)})`,
      stopped: 'sending was stopped early on request; in-flight requests were allowed to finish',
      aborted:
        'the run was aborted: in-flight requests were cancelled (recorded as `aborted`); the results are partial',
    };
    notes.push(
      `Live run against ${o.target.display}: ${this.sent} requests sent, ${this.failed} failed; ${stops[stopReason]}.`,
    );
    if (records.length > 0 && !records.some((r) => r.cachedTokensReported)) {
      notes.push(
        'The server reported no usage.prompt_tokens_details.cached_tokens (vLLM: start it with --enable-prompt-tokens-details), so the engine-reported hit rate is unknown.',
      );
    }
    if (records.length > 0 && this.instances.size === 0) {
      notes.push(
        `No answer carried the ${o.instanceHeader} header, so per-instance load is unknown (expected when benchmarking one server directly).`,
      );
    }
    if (this.peakInFlight > o.maxConnections) {
      notes.push(
        `Up to ${this.peakInFlight} requests were in flight over ${o.maxConnections} connections: some waited in the client, and their latency includes that wait.`,
      );
    }
    if (this.maxSendLagMs > 100) {
      const lags = sortedAscending(this.sendLags);
      const ms = (p: number): number => Math.round(percentileOfSorted(lags, p) ?? 0);
      notes.push(
        `The client sent requests late against the schedule (it or its machine was busy): P50 ${ms(50)} ms, P99 ${ms(99)} ms, max ${Math.round(this.maxSendLagMs)} ms of model time after the planned arrival.`,
      );
    }
    if (this.ceilings !== undefined) {
      notes.push(
        "Ceilings: computed from the requests this run sent in the measured window (warm-up requests fill the ceilings' caches first, as they fill the engines'), with the emulator's chat template and 4 characters per token; a real server's tokenizer and template shift them slightly.",
      );
    }
    if (!records.some((r) => r.decisionMicros !== undefined)) {
      notes.push(
        'No answer carried x-prefix-router-decision-us (the target is not prefix-router), so the decision-time columns are empty.',
      );
    }
    notes.push(...metricNotes);
    return notes;
  }
}
