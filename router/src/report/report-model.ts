import { describeLoad, type LoadShape } from '../workload/load-shape';
import type { WorkloadKind } from '../workload/workload';
import { scoreAgainstCeiling, type Ceilings } from './ceilings';
import { inFlightLoad, type Interval } from './in-flight-load';
import { byPriorityOf, type PriorityClassSummary } from './priority-classes';
import type { RequestRecord } from './request-record';
import {
  cdfPointsOfSorted,
  distribution,
  maxOverMean,
  percentileOfSorted,
  sortedAscending,
  type CdfPoint,
  type Distribution,
} from './stats';

/**
 * One report format for live and simulated runs. `buildReport` turns per-request records of each strategy
 * into aggregates; renderers (JSON, markdown, HTML) only read the resulting BenchmarkReport, so a report can
 * be re-rendered from its JSON file.
 */
export const REPORT_SCHEMA = 'cdk-prefix-aware-llm/benchmark-report';
export const REPORT_SCHEMA_VERSION = 1;

export type ParameterValue = string | number | boolean;

export interface StrategyId {
  /** Policy name, e.g. `random`, `sagemaker-prefix-aware`. */
  readonly name: string;
  readonly options?: Readonly<Record<string, ParameterValue>>;
}

/** Prometheus prefix-cache counter deltas over the run, summed over instances (vllm:prefix_cache_queries/hits). */
export interface PrometheusCacheDeltas {
  readonly prefixCacheQueries: number;
  readonly prefixCacheHits: number;
}

export interface StrategyRunInput {
  readonly strategy: StrategyId;
  /** Display name; default: name plus options. Must be unique within a report. */
  readonly label?: string;
  /** Every configured instance id, so an instance that got nothing still shows (share 0). */
  readonly instances: readonly string[];
  readonly records: Iterable<RequestRecord>;
  /**
   * Measured window. Latency and hit rate count requests sent within [startMs, endMs); throughput counts
   * requests that completed within it; load is averaged over it. Default: first send → last completion.
   */
  readonly window?: { readonly startMs: number; readonly endMs: number };
  readonly prometheus?: PrometheusCacheDeltas;
  /**
   * Ceilings of exactly the requests this run sent. Closed-loop runs send different numbers of requests per
   * strategy (a faster strategy sends more, and more repeats raise the ceiling), so each run is scored against
   * its own; default: the report's ceilings.
   */
  readonly ceilings?: Ceilings;
}

/** What the report shows of the workload (a Workload satisfies it). */
export interface WorkloadInfo {
  readonly kind: WorkloadKind;
  readonly spec: string;
  readonly description: string;
  readonly parameters: Readonly<Record<string, ParameterValue>>;
  readonly load: LoadShape;
  readonly notes: readonly string[];
}

export interface ReportInput {
  readonly title?: string;
  readonly mode: 'simulated' | 'live';
  /** ISO time; default now. Pass a fixed value for reproducible files. */
  readonly createdAt?: string;
  readonly workload: WorkloadInfo;
  /** Setup facts shown beside the results: instances, profile, KV capacity, router URL… */
  readonly environment?: Readonly<Record<string, ParameterValue>>;
  /** Label or policy name of the baseline; default `random` when such a run exists, else no comparison. */
  readonly baseline?: string;
  readonly ceilings?: Ceilings | null;
  readonly runs: readonly StrategyRunInput[];
  /** Points kept per TTFT CDF (default 200). */
  readonly cdfPoints?: number;
  readonly notes?: readonly string[];
}

export interface InstanceSummary {
  readonly id: string;
  readonly requests: number;
  /** requests / all requests of the strategy (0–1). */
  readonly share: number;
  readonly meanInFlight: number;
  readonly maxInFlight: number;
}

export interface StrategySummary {
  readonly label: string;
  readonly strategy: StrategyId;
  readonly requests: number;
  readonly succeeded: number;
  readonly errors: number;
  readonly errorsByCode: Readonly<Record<string, number>>;
  /**
   * The first message recorded for each error code (the engine's or server's words, e.g. vLLM's context-length
   * refusal), where one was; codes stay the grouping key. Absent in reports written before it was recorded.
   */
  readonly errorMessages?: Readonly<Record<string, string>>;
  readonly ttftMs: Distribution;
  readonly e2eMs: Distribution;
  readonly cacheHitRate: {
    /** Σ cached_tokens / Σ prompt_tokens over successful requests (engine usage); null when unreported. */
    readonly engineReported: number | null;
    /** Δ vllm:prefix_cache_hits / Δ vllm:prefix_cache_queries; null when not scraped. */
    readonly prometheus: number | null;
    /** The preferred of the two (engine-reported, else Prometheus) as a fraction of the fleet ceiling. */
    readonly ofFleetCeiling: number | null;
    /** The fleet ceiling this run was scored against (its own requests when the run brought ceilings). */
    readonly fleetCeiling: number | null;
  };
  readonly tokens: { readonly prompt: number; readonly cachedPrompt: number; readonly output: number };
  readonly throughput: {
    readonly windowSeconds: number;
    readonly requestsPerSecond: number | null;
    readonly outputTokensPerSecond: number | null;
  };
  readonly instances: readonly InstanceSummary[];
  readonly balance: {
    /** max / mean of per-instance request counts (1 = even). */
    readonly requestsMaxOverMean: number | null;
    /** max / mean of per-instance time-weighted mean in-flight. */
    readonly inFlightMaxOverMean: number | null;
    /** Highest in-flight count any instance reached. */
    readonly peakInFlight: number;
  };
  readonly decisionMicros: { readonly count: number; readonly p50: number | null; readonly p99: number | null };
  /** Share (0–1) of the requests sent in the window per decision reason; empty when no record carried a reason. */
  readonly decisionReasons: Readonly<Record<string, number>>;
  /**
   * What the policy predicted against what the engine delivered, over successful requests that carried a
   * prediction: Σ predicted cached ÷ Σ prompt tokens and Σ cached ÷ Σ prompt tokens. Null when the policy does not predict.
   */
  readonly predictedHit: { readonly predicted: number; readonly delivered: number } | null;
  readonly ttftCdf: readonly CdfPoint[];
  /** TTFT by the requests' priority class, keyed by the priority as text; absent when no request had one. */
  readonly byPriority?: Readonly<Record<string, PriorityClassSummary>>;
}

export interface Comparison {
  readonly label: string;
  readonly baseline: string;
  /** (strategy − baseline) / baseline × 100; negative = faster. */
  readonly ttftP50DeltaPct: number | null;
  readonly ttftP90DeltaPct: number | null;
  readonly ttftP99DeltaPct: number | null;
  readonly e2eP50DeltaPct: number | null;
  /** (strategy − baseline) hit rate in percentage points. */
  readonly hitRateDeltaPoints: number | null;
  readonly outputTokensPerSecondDeltaPct: number | null;
  readonly requestsPerSecondDeltaPct: number | null;
}

export interface BenchmarkReport {
  readonly schema: typeof REPORT_SCHEMA;
  readonly schemaVersion: typeof REPORT_SCHEMA_VERSION;
  readonly title: string;
  readonly mode: 'simulated' | 'live';
  readonly createdAt: string;
  readonly workload: {
    readonly kind: WorkloadKind;
    readonly spec: string;
    readonly description: string;
    readonly load: string;
    readonly parameters: Readonly<Record<string, ParameterValue>>;
    readonly notes: readonly string[];
  };
  readonly environment: Readonly<Record<string, ParameterValue>>;
  readonly ceilings: Ceilings | null;
  readonly baseline: string | null;
  readonly strategies: readonly StrategySummary[];
  readonly comparisons: readonly Comparison[];
  readonly notes: readonly string[];
}

export class ReportInputError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ReportInputError';
  }
}

/** `name` or `name (key=value, …)`. */
export function strategyLabel(strategy: StrategyId): string {
  const options = Object.entries(strategy.options ?? {});
  return options.length === 0 ? strategy.name : `${strategy.name} (${options.map(([k, v]) => `${k}=${v}`).join(', ')})`;
}

function ratio(numerator: number, denominator: number): number | null {
  return denominator > 0 ? numerator / denominator : null;
}

export function summarizeStrategy(
  run: StrategyRunInput,
  ceilings: Ceilings | null,
  cdfPointCount: number,
): StrategySummary {
  if (run.ceilings) ceilings = run.ceilings;
  const records = Array.from(run.records);
  const label = run.label ?? strategyLabel(run.strategy);
  const window = measuredWindow(run, records, label);
  const sentInWindow = records.filter(
    (r) => !window.exists || (r.sentAtMs >= window.startMs && r.sentAtMs < window.endMs),
  );
  const ok = sentInWindow.filter((r) => r.error === undefined);
  const { ttft, prompt, cached, output, usageSeen } = tokenTotals(ok);
  const ttftSorted = sortedAscending(ttft);
  const windowSeconds = window.exists ? (window.endMs - window.startMs) / 1000 : 0;
  const { completed, completedOutput } = completionsIn(records, window);
  const instances = instanceSummaries(run.instances, records, sentInWindow, window);
  const { errorsByCode, errorMessages } = errorCounts(sentInWindow);
  const decisions = sortedAscending(
    sentInWindow.flatMap((r) => (r.decisionMicros === undefined ? [] : [r.decisionMicros])),
  );
  const engineReported = usageSeen ? ratio(cached, prompt) : null;
  const prometheus = run.prometheus ? ratio(run.prometheus.prefixCacheHits, run.prometheus.prefixCacheQueries) : null;
  return {
    label,
    strategy: run.strategy,
    requests: sentInWindow.length,
    succeeded: ok.length,
    errors: sentInWindow.length - ok.length,
    errorsByCode,
    // Only where a message was recorded, so reports of runs without one read as before.
    ...(Object.keys(errorMessages).length > 0 ? { errorMessages } : {}),
    ttftMs: distribution(ttftSorted),
    e2eMs: distribution(ok.map((r) => r.e2eMs)),
    cacheHitRate: {
      engineReported,
      prometheus,
      ofFleetCeiling: scoreAgainstCeiling(engineReported ?? prometheus, ceilings),
      fleetCeiling: ceilings?.fleetHitRate ?? null,
    },
    tokens: { prompt, cachedPrompt: cached, output },
    throughput: {
      windowSeconds,
      requestsPerSecond: windowSeconds > 0 ? completed / windowSeconds : null,
      outputTokensPerSecond: windowSeconds > 0 ? completedOutput / windowSeconds : null,
    },
    instances,
    balance: {
      requestsMaxOverMean: maxOverMean(instances.map((i) => i.requests)),
      inFlightMaxOverMean: maxOverMean(instances.map((i) => i.meanInFlight)),
      peakInFlight: instances.reduce((m, i) => Math.max(m, i.maxInFlight), 0),
    },
    decisionMicros: {
      count: decisions.length,
      p50: percentileOfSorted(decisions, 50),
      p99: percentileOfSorted(decisions, 99),
    },
    decisionReasons: reasonShares(sentInWindow),
    predictedHit: predictedHitOf(ok),
    ttftCdf: cdfPointsOfSorted(ttftSorted, cdfPointCount),
    ...withPriorityClasses(byPriorityOf(sentInWindow, cdfPointCount)),
  };
}

function withPriorityClasses(byPriority: Readonly<Record<string, PriorityClassSummary>> | undefined): {
  byPriority?: Readonly<Record<string, PriorityClassSummary>>;
} {
  return byPriority === undefined ? {} : { byPriority };
}

/** The measured window: the run's own, else from the first send to the last completion; `exists` when not empty. */
interface MeasuredWindow {
  readonly startMs: number;
  readonly endMs: number;
  readonly exists: boolean;
}

function measuredWindow(run: StrategyRunInput, records: readonly RequestRecord[], label: string): MeasuredWindow {
  if (run.window) {
    if (!(run.window.endMs > run.window.startMs))
      throw new ReportInputError(
        `${label}: window end ${run.window.endMs} must be after its start ${run.window.startMs}`,
      );
    return { startMs: run.window.startMs, endMs: run.window.endMs, exists: true };
  }
  let startMs = Infinity;
  let endMs = -Infinity;
  for (const r of records) {
    startMs = Math.min(startMs, r.sentAtMs);
    endMs = Math.max(endMs, r.sentAtMs + r.e2eMs);
  }
  return { startMs, endMs, exists: endMs > startMs };
}

/** TTFTs and token sums of the successful requests; `usageSeen` when any reported its prompt tokens. */
function tokenTotals(ok: readonly RequestRecord[]): {
  ttft: number[];
  prompt: number;
  cached: number;
  output: number;
  usageSeen: boolean;
} {
  const ttft: number[] = [];
  let prompt = 0;
  let cached = 0;
  let output = 0;
  let usageSeen = false;
  for (const r of ok) {
    if (r.ttftMs !== null) ttft.push(r.ttftMs);
    if (r.promptTokens !== undefined) {
      usageSeen = true;
      prompt += r.promptTokens;
      cached += r.cachedPromptTokens ?? 0;
    }
    output += r.outputTokens ?? 0;
  }
  return { ttft, prompt, cached, output, usageSeen };
}

/** Throughput counts: completions inside the window (whenever sent), and their output tokens. */
function completionsIn(
  records: readonly RequestRecord[],
  window: MeasuredWindow,
): { completed: number; completedOutput: number } {
  let completed = 0;
  let completedOutput = 0;
  for (const r of records) {
    const end = r.sentAtMs + r.e2eMs;
    if (r.error === undefined && end >= window.startMs && end <= window.endMs) {
      completed++;
      completedOutput += r.outputTokens ?? 0;
    }
  }
  return { completed, completedOutput };
}

/** Per-instance share (of requests sent in the window) and in-flight load (of every request, over the window). */
function instanceSummaries(
  listed: readonly string[],
  records: readonly RequestRecord[],
  sentInWindow: readonly RequestRecord[],
  window: MeasuredWindow,
): InstanceSummary[] {
  const byInstance = new Map<string, { requests: number; intervals: Interval[] }>();
  for (const id of listed) byInstance.set(id, { requests: 0, intervals: [] });
  for (const r of sentInWindow) {
    if (r.instance === null) continue;
    let entry = byInstance.get(r.instance);
    if (entry === undefined) {
      entry = { requests: 0, intervals: [] };
      byInstance.set(r.instance, entry); // routed to an instance not in the list: still shown
    }
    entry.requests++;
  }
  for (const r of records) {
    if (r.instance === null) continue;
    byInstance.get(r.instance)?.intervals.push({ startMs: r.sentAtMs, endMs: r.sentAtMs + r.e2eMs });
  }
  const routed = Array.from(byInstance.values()).reduce((s, e) => s + e.requests, 0);
  return Array.from(byInstance.entries()).map(([id, e]) => {
    const load = window.exists
      ? inFlightLoad(e.intervals, window.startMs, window.endMs)
      : { meanInFlight: 0, maxInFlight: 0 };
    return {
      id,
      requests: e.requests,
      share: routed > 0 ? e.requests / routed : 0,
      meanInFlight: load.meanInFlight,
      maxInFlight: load.maxInFlight,
    };
  });
}

/** Failed requests by error code, and the first message recorded for each code. */
function errorCounts(sentInWindow: readonly RequestRecord[]): {
  errorsByCode: Record<string, number>;
  errorMessages: Record<string, string>;
} {
  const errorsByCode: Record<string, number> = {};
  const errorMessages: Record<string, string> = {};
  for (const r of sentInWindow) {
    if (r.error === undefined) continue;
    errorsByCode[r.error] = (errorsByCode[r.error] ?? 0) + 1;
    if (r.errorDetail !== undefined && r.errorDetail !== '' && !(r.error in errorMessages))
      errorMessages[r.error] = r.errorDetail;
  }
  return { errorsByCode, errorMessages };
}

/** Each routing reason's share of the requests that carry one, reasons in alphabetical order. */
function reasonShares(sentInWindow: readonly RequestRecord[]): Record<string, number> {
  const reasonCounts: Record<string, number> = {};
  let withReason = 0;
  for (const r of sentInWindow) {
    if (r.reason === undefined) continue;
    reasonCounts[r.reason] = (reasonCounts[r.reason] ?? 0) + 1;
    withReason++;
  }
  const decisionReasons: Record<string, number> = {};
  for (const key of Object.keys(reasonCounts).sort()) decisionReasons[key] = reasonCounts[key] / withReason;
  return decisionReasons;
}

/** The router's predicted cached share of the prompts against what the engines delivered (null without predictions). */
function predictedHitOf(ok: readonly RequestRecord[]): StrategySummary['predictedHit'] {
  let predictedPrompt = 0;
  let predictedCached = 0;
  let deliveredCached = 0;
  for (const r of ok) {
    if (r.predictedCachedTokens === undefined || r.promptTokens === undefined) continue;
    predictedPrompt += r.promptTokens;
    predictedCached += Math.min(r.predictedCachedTokens, r.promptTokens);
    deliveredCached += r.cachedPromptTokens ?? 0;
  }
  return predictedPrompt > 0
    ? { predicted: predictedCached / predictedPrompt, delivered: deliveredCached / predictedPrompt }
    : null;
}

function deltaPct(value: number | null, base: number | null): number | null {
  if (value === null || base === null || base === 0) return null;
  return ((value - base) / base) * 100;
}

/** The hit rate a comparison uses: engine-reported, else Prometheus. */
export function preferredHitRate(s: StrategySummary): number | null {
  return s.cacheHitRate.engineReported ?? s.cacheHitRate.prometheus;
}

export function compare(s: StrategySummary, base: StrategySummary): Comparison {
  const hit = preferredHitRate(s);
  const baseHit = preferredHitRate(base);
  return {
    label: s.label,
    baseline: base.label,
    ttftP50DeltaPct: deltaPct(s.ttftMs.p50, base.ttftMs.p50),
    ttftP90DeltaPct: deltaPct(s.ttftMs.p90, base.ttftMs.p90),
    ttftP99DeltaPct: deltaPct(s.ttftMs.p99, base.ttftMs.p99),
    e2eP50DeltaPct: deltaPct(s.e2eMs.p50, base.e2eMs.p50),
    hitRateDeltaPoints: hit === null || baseHit === null ? null : (hit - baseHit) * 100,
    outputTokensPerSecondDeltaPct: deltaPct(s.throughput.outputTokensPerSecond, base.throughput.outputTokensPerSecond),
    requestsPerSecondDeltaPct: deltaPct(s.throughput.requestsPerSecond, base.throughput.requestsPerSecond),
  };
}

/** What a baseline is matched against: a run's label and its strategy's name. */
export interface BaselineCandidate {
  readonly label: string;
  readonly strategy: { readonly name: string };
}

/** The run a baseline names: the one with that label, else the first of that strategy name. */
export function findBaselineRun<T extends BaselineCandidate>(key: string, runs: readonly T[]): T | undefined {
  return runs.find((r) => r.label === key) ?? runs.find((r) => r.strategy.name === key);
}

/**
 * Why `baseline` names none of `runs` (e.g. `'x' is not one of the runs (random, cache-aware)`), or undefined when
 * it names one. The CLIs check it before any run starts, with the same rule buildReport applies after.
 */
export function baselineProblem(baseline: string, runs: readonly BaselineCandidate[]): string | undefined {
  return findBaselineRun(baseline, runs) === undefined
    ? `'${baseline}' is not one of the runs (${runs.map((r) => r.label).join(', ')})`
    : undefined;
}

/** Aggregate every run into one report. Throws ReportInputError on duplicate labels or an unknown named baseline. */
export function buildReport(input: ReportInput): BenchmarkReport {
  const ceilings = input.ceilings ?? null;
  const strategies = input.runs.map((run) => summarizeStrategy(run, ceilings, input.cdfPoints ?? 200));
  const labels = new Set<string>();
  for (const s of strategies) {
    if (labels.has(s.label))
      throw new ReportInputError(`two runs share the label '${s.label}'; give each a distinct label`);
    labels.add(s.label);
  }
  let base: StrategySummary | undefined;
  if (input.baseline !== undefined) {
    base = findBaselineRun(input.baseline, strategies);
    if (base === undefined) throw new ReportInputError(`baseline ${baselineProblem(input.baseline, strategies)}`);
  } else {
    base = findBaselineRun('random', strategies);
  }
  const comparisons = base === undefined ? [] : strategies.filter((s) => s !== base).map((s) => compare(s, base));
  return {
    schema: REPORT_SCHEMA,
    schemaVersion: REPORT_SCHEMA_VERSION,
    title: input.title ?? `Routing strategies on ${input.workload.kind}`,
    mode: input.mode,
    createdAt: input.createdAt ?? new Date().toISOString(),
    workload: {
      kind: input.workload.kind,
      spec: input.workload.spec,
      description: input.workload.description,
      load: describeLoad(input.workload.load),
      parameters: { ...input.workload.parameters },
      notes: [...input.workload.notes],
    },
    environment: { ...(input.environment ?? {}) },
    ceilings,
    baseline: base?.label ?? null,
    strategies,
    comparisons,
    notes: [...(input.notes ?? [])],
  };
}
