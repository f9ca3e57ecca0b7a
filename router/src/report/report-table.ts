import {
  formatDeltaPct,
  formatMicros,
  formatMs,
  formatNumber,
  formatPercent,
  formatPoints,
  formatRatio,
} from './format';
import type { BenchmarkReport, Comparison, StrategySummary } from './report-model';

/**
 * The report's tables as rows of formatted cells. Markdown and HTML render the same rows, so the two never
 * disagree on a column or a rounding.
 */
export interface Table {
  readonly header: readonly string[];
  readonly rows: readonly (readonly string[])[];
  /** Columns that hold numbers (right-aligned). */
  readonly numeric: readonly boolean[];
}

export const SUMMARY_COLUMNS = [
  'strategy',
  'requests',
  'errors',
  'TTFT P50',
  'TTFT P90',
  'TTFT P99',
  'TTFT mean',
  'E2E P50',
  'E2E P90',
  'E2E P99',
  'hit rate',
  'hit (Prometheus)',
  'of fleet ceiling',
  'req/s',
  'output tok/s',
  'requests max/mean',
  'in-flight max/mean',
  'peak in-flight',
  'decision P50',
  'decision P99',
] as const;

function summaryRow(s: StrategySummary): string[] {
  return [
    s.label,
    formatNumber(s.requests),
    formatNumber(s.errors),
    formatMs(s.ttftMs.p50),
    formatMs(s.ttftMs.p90),
    formatMs(s.ttftMs.p99),
    formatMs(s.ttftMs.mean),
    formatMs(s.e2eMs.p50),
    formatMs(s.e2eMs.p90),
    formatMs(s.e2eMs.p99),
    formatPercent(s.cacheHitRate.engineReported),
    formatPercent(s.cacheHitRate.prometheus),
    formatPercent(s.cacheHitRate.ofFleetCeiling, 0),
    formatNumber(s.throughput.requestsPerSecond, 2),
    formatNumber(s.throughput.outputTokensPerSecond, 0),
    formatRatio(s.balance.requestsMaxOverMean),
    formatRatio(s.balance.inFlightMaxOverMean),
    formatNumber(s.balance.peakInFlight),
    formatMicros(s.decisionMicros.p50),
    formatMicros(s.decisionMicros.p99),
  ];
}

export function summaryTable(report: BenchmarkReport): Table {
  return {
    header: SUMMARY_COLUMNS,
    rows: report.strategies.map(summaryRow),
    numeric: SUMMARY_COLUMNS.map((_, i) => i > 0),
  };
}

/** A table keeping only some columns (by index), e.g. to split the wide summary for a page. */
export function selectColumns(table: Table, columns: readonly number[]): Table {
  return {
    header: columns.map((c) => table.header[c]),
    rows: table.rows.map((row) => columns.map((c) => row[c])),
    numeric: columns.map((c) => table.numeric[c]),
  };
}

/** Column indexes of the summary's latency part and of its cache, throughput and load part (both keep the strategy). */
export const LATENCY_COLUMNS = [0, 1, 2, 3, 4, 5, 6, 7, 8, 9] as const;
export const CACHE_LOAD_COLUMNS = [0, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19] as const;

export const COMPARISON_COLUMNS = [
  'strategy',
  'TTFT P50',
  'TTFT P90',
  'TTFT P99',
  'E2E P50',
  'hit rate',
  'output tok/s',
  'req/s',
] as const;

function comparisonRow(c: Comparison): string[] {
  return [
    c.label,
    formatDeltaPct(c.ttftP50DeltaPct),
    formatDeltaPct(c.ttftP90DeltaPct),
    formatDeltaPct(c.ttftP99DeltaPct),
    formatDeltaPct(c.e2eP50DeltaPct),
    formatPoints(c.hitRateDeltaPoints),
    formatDeltaPct(c.outputTokensPerSecondDeltaPct),
    formatDeltaPct(c.requestsPerSecondDeltaPct),
  ];
}

export function comparisonTable(report: BenchmarkReport): Table {
  return {
    header: COMPARISON_COLUMNS,
    rows: report.comparisons.map(comparisonRow),
    numeric: COMPARISON_COLUMNS.map((_, i) => i > 0),
  };
}

/** Instances as rows (numbered #1… as the charts label them), strategies as columns: request share and mean/max in-flight. */
export function instanceTable(report: BenchmarkReport): Table {
  const ids: string[] = [];
  for (const s of report.strategies) for (const i of s.instances) if (!ids.includes(i.id)) ids.push(i.id);
  const header = ['instance', ...report.strategies.map((s) => s.label)];
  const rows = ids.map((id, position) => [
    `#${position + 1} ${id}`,
    ...report.strategies.map((s) => {
      const i = s.instances.find((x) => x.id === id);
      return i === undefined ? '—' : `${formatPercent(i.share)} · ${i.meanInFlight.toFixed(1)} / ${i.maxInFlight}`;
    }),
  ]);
  return { header, rows, numeric: header.map((_, i) => i > 0) };
}

/** The ceilings as label/value pairs; empty when none were computed. */
export function ceilingRows(report: BenchmarkReport): [string, string][] {
  const c = report.ceilings;
  if (c === null) return [];
  return [
    ['ideal (unbounded cache, arrival order)', formatPercent(c.idealHitRate)],
    [
      `fleet (one LRU of ${formatNumber(c.fleetCapacityBlocks)} blocks = ${formatNumber(c.fleetCapacityBlocks * c.blockTokens)} tokens)`,
      formatPercent(c.fleetHitRate),
    ],
    ['requests / prompt tokens', `${formatNumber(c.requests)} / ${formatNumber(c.promptTokens)}`],
    ['distinct blocks', formatNumber(c.distinctBlocks)],
  ];
}

/** Strategies as rows: the share of decisions per reason, and predicted vs delivered cache hit where the policy predicts. */
export function decisionTable(report: BenchmarkReport): Table | undefined {
  const withReasons = report.strategies.filter(
    (s) => Object.keys(s.decisionReasons ?? {}).length > 0 || s.predictedHit,
  );
  if (withReasons.length === 0) return undefined;
  const header = ['strategy', 'decision reasons (share of requests)', 'predicted hit', 'delivered hit'];
  const rows = withReasons.map((s) => [
    s.label,
    Object.entries(s.decisionReasons ?? {})
      .map(([reason, share]) => `${reason} ${formatPercent(share)}`)
      .join(', ') || '—',
    s.predictedHit ? formatPercent(s.predictedHit.predicted) : '—',
    s.predictedHit ? formatPercent(s.predictedHit.delivered) : '—',
  ]);
  return { header, rows, numeric: [false, false, true, true] };
}
