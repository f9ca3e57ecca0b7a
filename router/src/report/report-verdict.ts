import { formatDeltaPct, formatPoints } from './format';
import { SAGEMAKER_ROUTING_OF } from '../common/sagemaker-routing';
import type { BenchmarkReport, Comparison, StrategySummary } from './report-model';
import type { CdfPoint } from './stats';

/** Throughput differences below this many percent are noise, however large the samples. */
export const MIN_THROUGHPUT_NOISE_PCT = 1;
/** Hit-rate differences below this many percentage points are noise. */
export const MIN_HIT_RATE_NOISE_POINTS = 1;
const Z95 = 1.96;

export interface HeadlineDelta {
  readonly value: number | null;
  /** Formatted: "−77.1 %", "+46.0 pts". */
  readonly text: string;
  /** Within noise: not to be read (or coloured) as a gain or a loss. */
  readonly noise: boolean;
  /** True when the change is an improvement beyond noise, false when a loss beyond noise, null when noise or unknown. */
  readonly better: boolean | null;
}

export interface Headline {
  readonly best: string;
  readonly baseline: string;
  readonly ttftP50: HeadlineDelta;
  readonly ttftP90: HeadlineDelta;
  readonly hitRate: HeadlineDelta;
  readonly throughput: HeadlineDelta;
  /** One sentence. */
  readonly verdict: string;
  /** One line per headline figure that is within noise. */
  readonly warnings: readonly string[];
}

/** Noise flags of every delta of a comparison (for colouring tables). */
export interface ComparisonNoise {
  readonly ttftP50: boolean;
  readonly ttftP90: boolean;
  readonly ttftP99: boolean;
  readonly hitRate: boolean;
  readonly outputTokensPerSecond: boolean;
  readonly requestsPerSecond: boolean;
  readonly e2eP50: boolean;
}

/** Value of the empirical CDF's inverse at fraction f (the first point at or above f). */
function valueAtFraction(cdf: readonly CdfPoint[], f: number): number {
  for (const p of cdf) if (p.fraction >= f) return p.value;
  return cdf[cdf.length - 1].value;
}

/** 95 % confidence interval of the q-quantile of a sample of n, read off its CDF points; null when unknown. */
export function quantileInterval(cdf: readonly CdfPoint[], n: number, q: number): [number, number] | null {
  if (cdf.length === 0 || n < 1) return null;
  const half = Z95 * Math.sqrt((q * (1 - q)) / n);
  return [valueAtFraction(cdf, Math.max(0, q - half)), valueAtFraction(cdf, Math.min(1, q + half))];
}

function percentileNoise(a: StrategySummary, b: StrategySummary, q: number): boolean {
  const ia = quantileInterval(a.ttftCdf, a.ttftMs.count, q);
  const ib = quantileInterval(b.ttftCdf, b.ttftMs.count, q);
  if (ia === null || ib === null) return true;
  return ia[0] <= ib[1] && ib[0] <= ia[1];
}

function completions(s: StrategySummary): number {
  return (s.throughput.requestsPerSecond ?? 0) * s.throughput.windowSeconds;
}

/** ± percent within which a throughput difference between two runs is noise. */
export function throughputNoisePct(a: StrategySummary, b: StrategySummary): number {
  const na = completions(a);
  const nb = completions(b);
  if (na < 1 || nb < 1) return Infinity;
  return Math.max(MIN_THROUGHPUT_NOISE_PCT, Z95 * Math.sqrt(1 / na + 1 / nb) * 100);
}

function summaryOf(report: BenchmarkReport, label: string): StrategySummary {
  const s = report.strategies.find((x) => x.label === label);
  if (s === undefined) throw new Error(`report has no strategy '${label}'`);
  return s;
}

/** Which of a comparison's differences against the baseline are within noise (the bounds on reportHeadline). */
export function comparisonNoise(report: BenchmarkReport, c: Comparison): ComparisonNoise {
  const s = summaryOf(report, c.label);
  const base = summaryOf(report, c.baseline);
  const tput = throughputNoisePct(s, base);
  const small = (v: number | null, bound: number) => v === null || Math.abs(v) < bound;
  return {
    ttftP50: percentileNoise(s, base, 0.5),
    ttftP90: percentileNoise(s, base, 0.9),
    ttftP99: percentileNoise(s, base, 0.99),
    hitRate: small(c.hitRateDeltaPoints, MIN_HIT_RATE_NOISE_POINTS),
    outputTokensPerSecond: small(c.outputTokensPerSecondDeltaPct, tput),
    requestsPerSecond: small(c.requestsPerSecondDeltaPct, tput),
    e2eP50: small(c.e2eP50DeltaPct, MIN_THROUGHPUT_NOISE_PCT),
  };
}

function delta(value: number | null, text: string, noise: boolean, lowerIsBetter: boolean): HeadlineDelta {
  const better = value === null || noise ? null : lowerIsBetter ? value < 0 : value > 0;
  return { value, text, noise: value === null ? true : noise, better };
}

function score(c: Comparison): number {
  if (c.ttftP50DeltaPct === null && c.ttftP90DeltaPct === null) return Infinity;
  return ((c.ttftP50DeltaPct ?? 0) + (c.ttftP90DeltaPct ?? 0)) / 2;
}

/**
 * The decision a report's reader wants in five seconds: which strategy is best, by how much against the
 * baseline on the four figures that decide (TTFT P50, TTFT P90, cache hit rate, throughput), one sentence, and
 * which of those differences are within noise. Computed from the report alone, so it renders the same from a
 * report's JSON file.
 *
 * Best: the strategy with the largest mean reduction of TTFT P50 and P90 against the baseline (TTFT is what
 * prefix-aware routing exists to cut; throughput and hit rate are reported beside it, and a throughput loss
 * beyond noise turns the verdict into a trade-off).
 *
 * Noise, from one run without repeats (a difference inside these bounds is not called a gain or a loss):
 * - a TTFT percentile: the distribution-free 95 % confidence interval of a quantile q from n samples spans the
 *   ranks n·q ± 1.96·√(n·q·(1−q)); two strategies' intervals (read off their TTFT CDFs) that overlap are noise;
 * - throughput: completions counted in a window vary like Poisson counts, relative standard error
 *   √(1/n₁ + 1/n₂); within ±1.96 of that, and never less than ±1 %, is noise;
 * - hit rate: under 1 percentage point is noise (token-weighted over thousands of requests, smaller moves are
 *   not worth a decision).
 *
 * Returns null when the report has no baseline to compare against.
 */
export function reportHeadline(report: BenchmarkReport): Headline | null {
  if (report.baseline === null || report.comparisons.length === 0) return null;
  // Lead with what a SageMaker endpoint can run itself; a better self-managed strategy is named after it.
  const managed = report.comparisons.filter((c) => isSageMakerManaged(report, c.label));
  const pool = managed.length > 0 ? managed : report.comparisons;
  const best = pool.reduce((a, b) => (score(b) < score(a) ? b : a));
  const noise = comparisonNoise(report, best);
  const s = summaryOf(report, best.label);
  const base = summaryOf(report, best.baseline);
  const tputBound = throughputNoisePct(s, base);
  const h = {
    ttftP50: delta(best.ttftP50DeltaPct, formatDeltaPct(best.ttftP50DeltaPct), noise.ttftP50, true),
    ttftP90: delta(best.ttftP90DeltaPct, formatDeltaPct(best.ttftP90DeltaPct), noise.ttftP90, true),
    hitRate: delta(best.hitRateDeltaPoints, formatPoints(best.hitRateDeltaPoints), noise.hitRate, false),
    throughput: delta(
      best.outputTokensPerSecondDeltaPct,
      formatDeltaPct(best.outputTokensPerSecondDeltaPct),
      noise.outputTokensPerSecond,
      false,
    ),
  };
  const figures = `TTFT P50 ${h.ttftP50.text}, P90 ${h.ttftP90.text}, hit rate ${h.hitRate.text}, throughput ${h.throughput.text}`;
  const latencyGain = h.ttftP50.better === true || h.ttftP90.better === true;
  const latencyLoss = h.ttftP50.better === false || h.ttftP90.better === false;
  let verdict: string;
  if (latencyGain && !latencyLoss && h.throughput.better !== false) {
    verdict = `${best.label} pays off against ${best.baseline}: ${figures}.`;
  } else if (latencyGain && !latencyLoss) {
    verdict = `${best.label} cuts first-token latency against ${best.baseline} but costs throughput, a trade-off: ${figures}.`;
  } else if (latencyGain) {
    verdict = `${best.label} is mixed against ${best.baseline}, better at one TTFT percentile and worse at the other: ${figures}.`;
  } else if (latencyLoss) {
    verdict = `No strategy beats ${best.baseline} on this workload; the closest, ${best.label}, is slower: ${figures}.`;
  } else {
    verdict = `No strategy differs from ${best.baseline} beyond noise on this workload (closest: ${best.label}, ${figures}).`;
  }
  const warnings: string[] = [];
  if (h.ttftP50.noise)
    warnings.push(`TTFT P50 ${h.ttftP50.text} is within noise (the 95 % intervals of the two medians overlap).`);
  if (h.ttftP90.noise)
    warnings.push(`TTFT P90 ${h.ttftP90.text} is within noise (the 95 % intervals of the two P90s overlap).`);
  if (h.hitRate.noise)
    warnings.push(`hit rate ${h.hitRate.text} is within noise (under ${MIN_HIT_RATE_NOISE_POINTS} point).`);
  if (h.throughput.noise) {
    warnings.push(
      `throughput ${h.throughput.text} is within noise (±${Number.isFinite(tputBound) ? tputBound.toFixed(1) : '∞'} % for the completions counted).`,
    );
  }
  return {
    best: best.label,
    baseline: best.baseline,
    ...h,
    verdict: verdict + selfManagedNote(report, best),
    warnings,
  };
}

/** Whether a strategy is one SageMaker routes itself (common/sagemaker-routing.ts). */
function isSageMakerManaged(report: BenchmarkReport, label: string): boolean {
  return SAGEMAKER_ROUTING_OF[summaryOf(report, label).strategy.name] !== undefined;
}

/** The self-managed strategy that beats the SageMaker one the headline leads with, as one more sentence, or ''. */
function selfManagedNote(report: BenchmarkReport, lead: Comparison): string {
  if (!isSageMakerManaged(report, lead.label)) return '';
  const others = report.comparisons.filter((c) => !isSageMakerManaged(report, c.label) && score(c) < score(lead));
  if (others.length === 0) return '';
  const best = others.reduce((a, b) => (score(b) < score(a) ? b : a));
  return (
    ` On a fleet the router manages itself (the router sidecar, EC2, EKS), ${best.label} goes further: ` +
    `TTFT P50 ${formatDeltaPct(best.ttftP50DeltaPct)}, P90 ${formatDeltaPct(best.ttftP90DeltaPct)} against ${best.baseline}.`
  );
}
