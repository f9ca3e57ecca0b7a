/**
 * Summary statistics used by every report.
 *
 * Percentile method: linear interpolation between the two nearest ranks of the sorted sample (Hyndman & Fan
 * type 7, numpy's and vLLM's benchmark default): for p in [0, 100] and n values, h = (n − 1)·p/100, the result
 * is x[⌊h⌋] + (h − ⌊h⌋)·(x[⌊h⌋+1] − x[⌊h⌋]). P0 is the minimum, P100 the maximum, and one value is every
 * percentile. An empty sample has no percentile (null), never 0.
 */

/** Sorted copy, ascending (numbers, not strings). */
export function sortedAscending(values: Iterable<number>): Float64Array {
  const sorted = Float64Array.from(values);
  sorted.sort();
  return sorted;
}

/** Percentile `p` (0–100) of an ascending-sorted sample; null when empty. */
export function percentileOfSorted(sorted: ArrayLike<number>, p: number): number | null {
  if (!(p >= 0 && p <= 100)) throw new RangeError(`percentile must be between 0 and 100 (got ${p})`);
  const n = sorted.length;
  if (n === 0) return null;
  const h = ((n - 1) * p) / 100;
  const lo = Math.floor(h);
  const hi = Math.min(lo + 1, n - 1);
  return sorted[lo] + (h - lo) * (sorted[hi] - sorted[lo]);
}

export function percentile(values: Iterable<number>, p: number): number | null {
  return percentileOfSorted(sortedAscending(values), p);
}

/** The middle value of a sample (the mean of the two middle ones for an even count); throws when empty. */
export function median(values: readonly number[]): number {
  if (values.length === 0) throw new RangeError('median of no values');
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 === 1 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
}

/** The geometric mean of positive values (the mean of ratios that read the same either way up); null when empty. */
export function geometricMean(values: Iterable<number>): number | null {
  let logSum = 0;
  let n = 0;
  for (const v of values) {
    if (!(v > 0)) throw new RangeError(`a geometric mean takes positive values only (got ${v})`);
    logSum += Math.log(v);
    n++;
  }
  return n === 0 ? null : Math.exp(logSum / n);
}

export function mean(values: Iterable<number>): number | null {
  let sum = 0;
  let n = 0;
  for (const v of values) {
    sum += v;
    n++;
  }
  return n === 0 ? null : sum / n;
}

/** The percentiles every distribution reports (and `--slo` may bound). */
export const DISTRIBUTION_PERCENTILES = ['p50', 'p90', 'p95', 'p99'] as const;
export type DistributionPercentile = (typeof DISTRIBUTION_PERCENTILES)[number];

export interface Distribution {
  readonly count: number;
  readonly mean: number | null;
  readonly min: number | null;
  readonly p50: number | null;
  readonly p90: number | null;
  readonly p95: number | null;
  readonly p99: number | null;
  readonly max: number | null;
}

export function distribution(values: Iterable<number>): Distribution {
  const sorted = sortedAscending(values);
  let sum = 0;
  for (let i = 0; i < sorted.length; i++) sum += sorted[i];
  return {
    count: sorted.length,
    mean: sorted.length === 0 ? null : sum / sorted.length,
    min: sorted.length === 0 ? null : sorted[0],
    p50: percentileOfSorted(sorted, 50),
    p90: percentileOfSorted(sorted, 90),
    p95: percentileOfSorted(sorted, 95),
    p99: percentileOfSorted(sorted, 99),
    max: sorted.length === 0 ? null : sorted[sorted.length - 1],
  };
}

/** One point of an empirical CDF: a fraction `fraction` of the sample is ≤ `value`. */
export interface CdfPoint {
  readonly value: number;
  readonly fraction: number;
}

/**
 * Points of the empirical CDF of an ascending-sorted sample, at most `maxPoints` of them (≥ 2): evenly spaced
 * in rank, always including the minimum (fraction 1/n) and the maximum (fraction 1). Enough for a chart,
 * small enough to keep in the JSON report.
 */
export function cdfPointsOfSorted(sorted: ArrayLike<number>, maxPoints = 200): CdfPoint[] {
  const n = sorted.length;
  if (n === 0) return [];
  if (maxPoints < 2) throw new RangeError(`maxPoints must be at least 2 (got ${maxPoints})`);
  const points: CdfPoint[] = [];
  const steps = Math.min(n, maxPoints);
  let lastRank = -1;
  for (let i = 0; i < steps; i++) {
    const rank = steps === 1 ? n - 1 : Math.round((i * (n - 1)) / (steps - 1));
    if (rank === lastRank) continue;
    lastRank = rank;
    points.push({ value: sorted[rank], fraction: (rank + 1) / n });
  }
  return points;
}

export function cdfPoints(values: Iterable<number>, maxPoints = 200): CdfPoint[] {
  return cdfPointsOfSorted(sortedAscending(values), maxPoints);
}

/** max / mean of positive-total values (1 = perfectly even); null when there are none or they sum to 0. */
export function maxOverMean(values: readonly number[]): number | null {
  if (values.length === 0) return null;
  let sum = 0;
  let max = -Infinity;
  for (const v of values) {
    sum += v;
    if (v > max) max = v;
  }
  return sum > 0 ? max / (sum / values.length) : null;
}
