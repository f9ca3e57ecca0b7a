import {
  buildReport,
  compare,
  ReportInputError,
  strategyLabel,
  type BenchmarkReport,
  type ParameterValue,
  type StrategyId,
  type StrategySummary,
} from '../report/report-model';
import type { Workload } from '../workload/workload';
import { toStrategyRun, type LiveBenchmarkResult } from './live-benchmark';

/**
 * Reports of live runs. One run becomes a one-strategy report; `appendToReport` adds a run to an existing
 * report (read back with parseReportJson), so strategies benchmarked one after another (three router
 * configurations in front of the same fleet, say) end up side by side with comparisons against one baseline.
 *
 * Merging works on the aggregated StrategySummary of each run (the JSON keeps everything the renderers and
 * comparisons need, including the TTFT CDF), so no raw records are needed to merge. Raw records are still
 * written beside the report (see recordsJsonl) for anyone who wants their own statistics.
 */
export interface LiveReportInput {
  readonly result: LiveBenchmarkResult;
  readonly workload: Workload;
  readonly strategy: StrategyId | string;
  /** Display name of this run; default the strategy name with its options. */
  readonly label?: string;
  /** Configured instance ids, so an instance that got nothing still shows. */
  readonly instances?: readonly string[];
  readonly baseline?: string;
  readonly title?: string;
  readonly createdAt?: string;
}

/** Facts that must be equal for two runs to share a report. */
export const SHARED_ENVIRONMENT_KEYS = ['driver', 'model', 'time scale'] as const;

export function liveEnvironment(result: LiveBenchmarkResult): Record<string, ParameterValue> {
  return {
    driver: 'prefix-router bench (streaming client, client-side timing)',
    model: result.model,
    'time scale': result.timeScale,
  };
}

/** One live run as a report. Run-specific notes are prefixed with the run's label so they stay attributable after appends. */
export function buildLiveReport(input: LiveReportInput): BenchmarkReport {
  const strategy: StrategyId = typeof input.strategy === 'string' ? { name: input.strategy } : input.strategy;
  const label = input.label ?? strategyLabel(strategy);
  const createdAt = input.createdAt ?? new Date().toISOString();
  const run = toStrategyRun(input.result, strategy, input.instances ?? [], label);
  const report = buildReport({
    title: input.title ?? `Live benchmark on ${input.workload.kind}`,
    mode: 'live',
    createdAt,
    workload: input.workload,
    environment: liveEnvironment(input.result),
    baseline: input.baseline,
    ceilings: input.result.ceilings ?? null,
    runs: [run],
    notes: [`${label}: run at ${createdAt}.`, ...input.result.notes.map((n) => `${label}: ${n}`)],
  });
  return report;
}

export class ReportAppendError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ReportAppendError';
  }
}

/**
 * Checks that `addition`'s runs can join `existing` (same mode, same workload spec, same shared environment,
 * distinct labels); throws ReportAppendError saying what differs. `newLabels` lets a caller check before the
 * run (the labels it will add).
 */
export function checkAppendable(
  existing: BenchmarkReport,
  addition: {
    mode: BenchmarkReport['mode'];
    workloadSpec: string;
    environment?: Readonly<Record<string, ParameterValue>>;
    labels: readonly string[];
  },
): void {
  if (existing.mode !== addition.mode)
    throw new ReportAppendError(`the report holds ${existing.mode} runs; a ${addition.mode} run cannot join it`);
  if (existing.workload.spec !== addition.workloadSpec) {
    throw new ReportAppendError(
      `the report's workload is '${existing.workload.spec}' but this run's is '${addition.workloadSpec}'; strategies compare only on the same workload`,
    );
  }
  for (const label of addition.labels) {
    if (existing.strategies.some((s) => s.label === label)) {
      throw new ReportAppendError(`the report already has a run labelled '${label}'; give this run another label`);
    }
  }
  for (const key of SHARED_ENVIRONMENT_KEYS) {
    const before = existing.environment[key];
    const after = addition.environment?.[key];
    if (before !== undefined && after !== undefined && before !== after) {
      throw new ReportAppendError(
        `the report's ${key} is '${before}' but this run's is '${after}'; runs in one report must share it`,
      );
    }
  }
}

function findBaseline(strategies: readonly StrategySummary[], key: string): StrategySummary | undefined {
  return strategies.find((s) => s.label === key) ?? strategies.find((s) => s.strategy.name === key);
}

/**
 * `existing` plus every run of `addition`, with comparisons recomputed against `baseline` (a label or policy
 * name; default: the existing report's baseline, else a run named `random`, else none).
 */
export function appendToReport(
  existing: BenchmarkReport,
  addition: BenchmarkReport,
  baseline?: string,
): BenchmarkReport {
  checkAppendable(existing, {
    mode: addition.mode,
    workloadSpec: addition.workload.spec,
    environment: addition.environment,
    labels: addition.strategies.map((s) => s.label),
  });
  const strategies = [...existing.strategies, ...addition.strategies];
  let base: StrategySummary | undefined;
  if (baseline !== undefined) {
    base = findBaseline(strategies, baseline);
    if (base === undefined)
      throw new ReportInputError(
        `baseline '${baseline}' is not one of the runs (${strategies.map((s) => s.label).join(', ')})`,
      );
  } else {
    base =
      (existing.baseline === null ? undefined : findBaseline(strategies, existing.baseline)) ??
      findBaseline(strategies, 'random');
  }
  const environment: Record<string, ParameterValue> = { ...existing.environment };
  for (const [key, value] of Object.entries(addition.environment)) environment[key] ??= value;
  const notes = [...existing.notes];
  for (const note of addition.notes) if (!notes.includes(note)) notes.push(note);
  return {
    ...existing,
    environment,
    ceilings: existing.ceilings ?? addition.ceilings,
    baseline: base?.label ?? null,
    strategies,
    comparisons: base === undefined ? [] : strategies.filter((s) => s !== base).map((s) => compare(s, base)),
    notes,
  };
}

/** Raw per-request records, one JSON object per line (the sidecar written beside a report). */
export function recordsJsonl(result: LiveBenchmarkResult): string {
  return result.records.map((r) => JSON.stringify(r)).join('\n') + (result.records.length > 0 ? '\n' : '');
}

/** A label as a file-name part: letters, digits, '.', '_', '-'. */
export function fileSlug(label: string): string {
  const slug = label.replace(/[^A-Za-z0-9._-]+/g, '-').replace(/^-+|-+$/g, '');
  return slug === '' ? 'run' : slug.slice(0, 80);
}
