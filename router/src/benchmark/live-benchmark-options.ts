import { ConfigError } from '../common/config-error';
import type { LivePhase, LiveProgress } from '../report/progress';
import type { CeilingOptions } from '../report/ceilings';
import type { LoadShape } from '../workload/load-shape';
import type { Workload } from '../workload/workload';
import { normalizeMetricsUrl } from './backend-metrics';
import type { RequestTransport } from './request-transport';
import { DEFAULT_INSTANCE_HEADER } from './streaming-client';
import { parseTargetUrl, type TargetUrl } from './target-url';

/**
 * Options of runLiveBenchmark. Every duration is in MODEL time: wall time × timeScale. With timeScale 1 (a
 * real vLLM fleet) model time is wall time; against emulators running N× faster, pass timeScale N and every
 * arrival gap is divided by N while every measured duration is multiplied by N, so the report reads as if the
 * modelled hardware ran in real time.
 */
export interface LiveBenchmarkOptions {
  /** Base URL of an OpenAI-compatible server (http/https); requests go to `url + /v1/chat/completions` etc. */
  readonly url: string;
  readonly workload: Workload;
  /** Model name in request bodies; default: the first model `GET url/v1/models` lists. */
  readonly model?: string;
  /** Overrides the workload's load shape (open loops still send at the workload's arrivalMs). */
  readonly load?: LoadShape;
  /** Send at most this many requests. */
  readonly maxRequests?: number;
  /** Stop sending after this much model time since the first send; in-flight requests then drain. */
  readonly durationMs?: number;
  /** Requests sent in the first `warmupMs` run but are left out of latency and hit rate. Default 0. */
  readonly warmupMs?: number;
  /** How much faster than real time the servers run (emulators' --time-scale). Default 1. */
  readonly timeScale?: number;
  /** A request not finished within this (model) time is cancelled and recorded as `timeout`. Default 600 s. */
  readonly requestTimeoutMs?: number;
  /** After the last send, in-flight requests get this long before they are cancelled as `drain_timeout`. Default: requestTimeoutMs. */
  readonly drainTimeoutMs?: number;
  /** Response header naming the serving instance. Default x-prefix-router-instance. */
  readonly instanceHeader?: string;
  /** Prometheus endpoints of the backends (a server root gets /metrics), scraped at the window start and the end. */
  readonly backendMetricsUrls?: readonly string[];
  /** Wall-clock limit of one metrics scrape. Default 10 s. */
  readonly scrapeTimeoutMs?: number;
  /** Extra request headers sent to `url` (e.g. authorization); never sent to metrics URLs. */
  readonly headers?: Readonly<Record<string, string>>;
  /** Send vLLM's `ignore_eos: true` so every request generates exactly max_tokens. Default true. */
  readonly ignoreEos?: boolean;
  /** Connections to the server. Default: the concurrency (closed loop) or 1024 (open loop). */
  readonly maxConnections?: number;
  /** Aborts the run now: sending stops, in-flight requests are cancelled and recorded as `aborted`. */
  readonly signal?: AbortSignal;
  /** Stops sending; in-flight requests finish (up to the drain timeout). */
  readonly stopSignal?: AbortSignal;
  /**
   * Compute the hit-rate ceilings (ideal and fleet) of exactly the requests sent, for the report's "of fleet
   * ceiling" score: fleetCapacityBlocks = KV blocks of all instances together.
   */
  readonly ceilings?: CeilingOptions;
  readonly onProgress?: (progress: LiveProgress) => void;
  /**
   * Sends the requests instead of the HTTP client to `url` (e.g. the SageMaker runtime API); `url` then only
   * names the target in the report. The run closes it at the end.
   */
  readonly transport?: RequestTransport;
  /** Wall milliseconds between onProgress calls. Default 1000. */
  readonly progressIntervalMs?: number;
}

// The progress shape is shared with the simulator's progress board; it lives with the progress reporter.
export type { LivePhase, LiveProgress };

/** Invalid runLiveBenchmark options: the common ConfigError, every problem at once, under its own heading. */
export class LiveBenchmarkOptionsError extends ConfigError {
  constructor(problems: readonly string[]) {
    super(problems, 'invalid live benchmark options');
    this.name = 'LiveBenchmarkOptionsError';
  }
}

/** Ranges shared by the API validation, the CLI flags and the docs. */
export const LIVE_RANGES = {
  timeScale: { min: 0, max: 1_000_000, minExclusive: true },
  maxRequests: { min: 1, max: 100_000_000 },
  durationMs: { min: 0, max: 604_800_000, minExclusive: true },
  warmupMs: { min: 0, max: 604_800_000 },
  requestTimeoutMs: { min: 0, max: 86_400_000, minExclusive: true },
  drainTimeoutMs: { min: 0, max: 86_400_000 },
  scrapeTimeoutMs: { min: 1, max: 600_000 },
  maxConnections: { min: 1, max: 65_536 },
  concurrency: { min: 1, max: 100_000 },
  progressIntervalMs: { min: 10, max: 3_600_000 },
} as const;

export const DEFAULT_REQUEST_TIMEOUT_MS = 600_000;
export const DEFAULT_OPEN_LOOP_CONNECTIONS = 1024;

export interface ResolvedLiveOptions {
  readonly target: TargetUrl;
  readonly workload: Workload;
  readonly model: string | undefined;
  readonly load: LoadShape;
  readonly maxRequests: number;
  readonly durationMs: number;
  readonly warmupMs: number;
  readonly timeScale: number;
  readonly requestTimeoutMs: number;
  readonly drainTimeoutMs: number;
  readonly instanceHeader: string;
  readonly backendMetricsUrls: readonly string[];
  readonly scrapeTimeoutMs: number;
  readonly headers: Readonly<Record<string, string>>;
  readonly ignoreEos: boolean;
  readonly maxConnections: number;
  readonly progressIntervalMs: number;
  readonly ceilings: CeilingOptions | undefined;
}

const TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;

function rangeText(r: { min: number; max: number; minExclusive?: boolean }): string {
  return `${'minExclusive' in r && r.minExclusive ? '(' : '['}${r.min}, ${r.max}]`;
}

/** `value` when it is a number (an integer when asked) in its LIVE_RANGES range; else `fallback`, and a problem. */
function rangedNumber(
  problems: string[],
  name: keyof typeof LIVE_RANGES,
  value: number | undefined,
  fallback: number,
  integer: boolean,
): number {
  if (value === undefined) return fallback;
  const r = LIVE_RANGES[name] as { min: number; max: number; minExclusive?: boolean };
  const low = r.minExclusive ? value > r.min : value >= r.min;
  if (
    typeof value !== 'number' ||
    !Number.isFinite(value) ||
    (integer && !Number.isInteger(value)) ||
    !low ||
    value > r.max
  ) {
    problems.push(`${name} must be ${integer ? 'an integer' : 'a number'} in ${rangeText(r)} (got ${String(value)})`);
    return fallback;
  }
  return value;
}

function ceilingsProblems(c: NonNullable<LiveBenchmarkOptions['ceilings']>): string[] {
  const problems: string[] = [];
  if (!Number.isInteger(c.fleetCapacityBlocks) || c.fleetCapacityBlocks < 1)
    problems.push(`ceilings.fleetCapacityBlocks must be a positive integer (got ${c.fleetCapacityBlocks})`);
  if (c.blockTokens !== undefined && (!Number.isInteger(c.blockTokens) || c.blockTokens < 1))
    problems.push(`ceilings.blockTokens must be a positive integer (got ${c.blockTokens})`);
  return problems;
}

/** Validates every option at once; throws LiveBenchmarkOptionsError naming each bad one and its range. */
export function resolveLiveOptions(options: LiveBenchmarkOptions): ResolvedLiveOptions {
  const problems: string[] = [];
  const number = (name: keyof typeof LIVE_RANGES, value: number | undefined, fallback: number, integer = false) =>
    rangedNumber(problems, name, value, fallback, integer);

  let target: TargetUrl = { origin: 'http://invalid', basePath: '', display: 'http://invalid' };
  try {
    target = parseTargetUrl(options.url);
  } catch (err) {
    problems.push((err as Error).message);
  }
  const load = options.load ?? options.workload.load;
  if (load.mode === 'closed') number('concurrency', load.concurrency, 1, true);
  const timeScale = number('timeScale', options.timeScale, 1);
  const maxRequests = number('maxRequests', options.maxRequests, Infinity, true);
  const durationMs = number('durationMs', options.durationMs, Infinity);
  const warmupMs = number('warmupMs', options.warmupMs, 0);
  if (warmupMs > 0 && warmupMs >= durationMs)
    problems.push(`warmupMs (${warmupMs}) must be shorter than durationMs (${durationMs})`);
  const requestTimeoutMs = number('requestTimeoutMs', options.requestTimeoutMs, DEFAULT_REQUEST_TIMEOUT_MS);
  const drainTimeoutMs = number('drainTimeoutMs', options.drainTimeoutMs, requestTimeoutMs);
  const scrapeTimeoutMs = number('scrapeTimeoutMs', options.scrapeTimeoutMs, 10_000);
  const defaultConnections =
    load.mode === 'closed' ? Math.min(load.concurrency, LIVE_RANGES.maxConnections.max) : DEFAULT_OPEN_LOOP_CONNECTIONS;
  const maxConnections = number('maxConnections', options.maxConnections, defaultConnections, true);
  const progressIntervalMs = number('progressIntervalMs', options.progressIntervalMs, 1000);
  const instanceHeader = options.instanceHeader ?? DEFAULT_INSTANCE_HEADER;
  if (!TOKEN.test(instanceHeader))
    problems.push(`instanceHeader must be an HTTP header name (got '${instanceHeader}')`);
  if (options.model !== undefined && options.model.trim() === '') problems.push('model must not be empty');
  const backendMetricsUrls: string[] = [];
  for (const url of options.backendMetricsUrls ?? []) {
    try {
      backendMetricsUrls.push(normalizeMetricsUrl(url, 'backendMetricsUrls entry'));
    } catch (err) {
      problems.push((err as Error).message);
    }
  }
  for (const name of Object.keys(options.headers ?? {})) {
    if (!TOKEN.test(name)) problems.push(`headers: '${name}' is not an HTTP header name`);
  }
  const c = options.ceilings;
  if (c !== undefined) problems.push(...ceilingsProblems(c));
  if (problems.length > 0) throw new LiveBenchmarkOptionsError(problems);
  return {
    target,
    workload: options.workload,
    model: options.model,
    load,
    maxRequests,
    durationMs,
    warmupMs,
    timeScale,
    requestTimeoutMs,
    drainTimeoutMs,
    instanceHeader: instanceHeader.toLowerCase(),
    backendMetricsUrls,
    scrapeTimeoutMs,
    headers: { ...(options.headers ?? {}) },
    ignoreEos: options.ignoreEos ?? true,
    maxConnections,
    progressIntervalMs,
    ceilings: c,
  };
}
