import { ConfigError } from '../common/config-error';
import type { StrategySummary } from '../report/report-model';
import { DISTRIBUTION_PERCENTILES, type DistributionPercentile } from '../report/stats';

/**
 * Service-level objectives `plan` sizes a fleet for. One SLO is one bound on one figure of a run:
 *
 *     SLO     := LATENCY '<=' DURATION  |  'error-rate' '<=' RATE
 *     LATENCY := ('p50' | 'p90' | 'p99') '-' ('ttft' | 'e2e')
 *     DURATION:= NUMBER ('ms' | 's')            e.g. 1.5s, 800ms
 *     RATE    := NUMBER '%' | NUMBER            e.g. 1%, 0.01 (a fraction 0..1)
 *
 * Latencies are percentiles over the requests sent in the measured window that succeeded (the report's TTFT
 * and E2E); the error rate is failed ÷ sent in that window.
 */
export const SLO_GRAMMAR = `${DISTRIBUTION_PERCENTILES.join('|')} '-' ttft|e2e '<=' NUMBER ms|s, or error-rate '<=' NUMBER[%] (e.g. p90-ttft<=1.5s, p95-ttft<=800ms, p99-e2e<=20s, error-rate<=1%)`;

/** Any percentile the report computes (report/stats.ts). */
export type LatencyPercentile = DistributionPercentile;
export type LatencyMetric = 'ttft' | 'e2e';

export type Slo =
  | {
      readonly kind: 'latency';
      readonly percentile: LatencyPercentile;
      readonly metric: LatencyMetric;
      readonly maxMs: number;
      readonly text: string;
    }
  | { readonly kind: 'error-rate'; readonly maxFraction: number; readonly text: string };

/** A --slo that does not parse (the message names the part and gives the grammar): a ConfigError. */
export class SloError extends ConfigError {
  constructor(message: string) {
    super([message]);
    this.name = 'SloError';
  }
}

const PERCENTILES: readonly LatencyPercentile[] = DISTRIBUTION_PERCENTILES;
const UNITS = ['ms', 's'];
const METRICS: readonly LatencyMetric[] = ['ttft', 'e2e'];
const NUMBER = /^(?:\d+(?:\.\d*)?|\.\d+)$/;

/** Parses one `--slo`; the error names the part that failed and gives the grammar. */
export function parseSlo(raw: string): Slo {
  const text = raw.trim();
  const fail = (what: string): never => {
    throw new SloError(`--slo ${JSON.stringify(raw)}: ${what}; the grammar is ${SLO_GRAMMAR}`);
  };
  const at = text.indexOf('<=');
  if (at < 0)
    fail(
      text.includes('<') || text.includes('=')
        ? "the comparison must be '<=' (an SLO is an upper bound)"
        : "no '<=' between the figure and its bound",
    );
  const figure = text.slice(0, at).trim().toLowerCase();
  const bound = text
    .slice(at + 2)
    .trim()
    .toLowerCase();
  if (figure === 'error-rate') {
    const percent = bound.endsWith('%');
    const number = percent ? bound.slice(0, -1).trim() : bound;
    if (!NUMBER.test(number)) fail(`the error-rate bound ${JSON.stringify(bound)} is not a number or a percentage`);
    const fraction = percent ? Number(number) / 100 : Number(number);
    if (fraction > 1)
      fail(
        `the error-rate bound ${JSON.stringify(bound)} is above ${percent ? '100 %' : '1 (write a percentage with %)'}`,
      );
    return { kind: 'error-rate', maxFraction: fraction, text: `error-rate<=${formatFraction(fraction)}` };
  }
  const [percentile, metric, ...extra] = figure.split('-');
  if (extra.length > 0 || metric === undefined)
    fail(`the figure ${JSON.stringify(figure)} is not PERCENTILE-METRIC or error-rate`);
  if (!PERCENTILES.includes(percentile as LatencyPercentile))
    fail(`the percentile ${JSON.stringify(percentile)} is not one of ${PERCENTILES.join(', ')}`);
  if (!METRICS.includes(metric as LatencyMetric))
    fail(`the metric ${JSON.stringify(metric)} is not one of ${METRICS.join(', ')}`);
  const [, number = '', unit = ''] = /^(.*?)\s*([a-zµ]*)$/.exec(bound) ?? [];
  if (unit === '') fail(`the bound ${JSON.stringify(bound)} has no unit (ms or s)`);
  if (!UNITS.includes(unit))
    fail(
      `the unit ${JSON.stringify(unit)} of ${JSON.stringify(bound)} is not one of ${UNITS.join(', ')} (e.g. 800ms, 1.5s)`,
    );
  if (!NUMBER.test(number) || Number(number) <= 0)
    fail(`the bound ${JSON.stringify(bound)} is not a positive number of ${unit}`);
  // Rounded to a microsecond: 1.1 s is 1100 ms, not 1100.0000000000002.
  const maxMs = Math.round((unit === 'ms' ? Number(number) : Number(number) * 1000) * 1000) / 1000;
  return {
    kind: 'latency',
    percentile: percentile as LatencyPercentile,
    metric: metric as LatencyMetric,
    maxMs,
    text: `${percentile}-${metric}<=${formatMs(maxMs)}`,
  };
}

/** The SLOs as given, with repeats of the same figure refused (two bounds on one figure is a typo). */
export function parseSlos(raw: readonly string[]): Slo[] {
  if (raw.length === 0) throw new SloError(`plan needs at least one --slo; the grammar is ${SLO_GRAMMAR}`);
  const slos = raw.map(parseSlo);
  const figures = slos.map(sloFigure);
  const repeated = figures.find((f, i) => figures.indexOf(f) !== i);
  if (repeated !== undefined) throw new SloError(`--slo bounds ${repeated} twice; give each figure one bound`);
  return slos;
}

/** What an SLO bounds, e.g. `p90-ttft` or `error-rate`. */
export function sloFigure(slo: Slo): string {
  return slo.kind === 'error-rate' ? 'error-rate' : `${slo.percentile}-${slo.metric}`;
}

/** The figure an SLO bounds, read from a run's summary (null when the run has no such figure: nothing succeeded). */
export function sloValue(slo: Slo, summary: StrategySummary): number | null {
  if (slo.kind === 'error-rate') return summary.requests === 0 ? null : summary.errors / summary.requests;
  const distribution = slo.metric === 'ttft' ? summary.ttftMs : summary.e2eMs;
  return distribution[slo.percentile];
}

/**
 * How far a run is from the SLO: value ÷ bound (≤ 1 meets it). A missing figure is infinitely far; a zero
 * error-rate bound is met only by no errors.
 */
export function sloRatio(slo: Slo, summary: StrategySummary): number {
  const value = sloValue(slo, summary);
  if (value === null) return Infinity;
  const bound = slo.kind === 'error-rate' ? slo.maxFraction : slo.maxMs;
  if (bound === 0) return value === 0 ? 0 : Infinity;
  return value / bound;
}

/** The worst ratio over every SLO: ≤ 1 when the run meets them all. */
export function sloMargin(slos: readonly Slo[], summary: StrategySummary): number {
  let worst = 0;
  for (const slo of slos) worst = Math.max(worst, sloRatio(slo, summary));
  return worst;
}

export function formatSloValue(slo: Slo, value: number | null): string {
  if (value === null) return 'n/a';
  return slo.kind === 'error-rate' ? formatFraction(value) : formatMs(value);
}

/** Whole seconds as `2s`, anything else as `1500ms`: exact, so the text parses back to the same bound. */
function formatMs(ms: number): string {
  return ms >= 1000 && ms % 1000 === 0 ? `${ms / 1000}s` : `${ms}ms`;
}

function formatFraction(fraction: number): string {
  return `${Number((fraction * 100).toPrecision(4))}%`;
}
