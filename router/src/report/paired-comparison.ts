import { geometricMean as geometricMeanOf } from './stats';

/**
 * Is one strategy worse than another beyond their run-to-run spread? A paired comparison: each run gives both
 * strategies the same workload, seed and jitter stream, and yields one ratio (here a P90 TTFT ÷ the baseline's P90).
 *
 * Method: the sign test's exact confidence interval for the median of the log-ratios (the order-statistic interval
 * [x(k), x(n+1−k)] of the sorted sample, whose coverage is 1 − 2·P(B ≤ k − 1) for B ~ Binomial(n, ½); e.g. Hollander,
 * Wolfe & Chicken, Nonparametric Statistical Methods, §3.6). Chosen because it assumes only independent runs: a fleet
 * near overload is chaotic (one changed decision moves a P90 by several per cent), its ratios are skewed and
 * heavy-tailed, and a t interval or a bootstrap on six runs would lean on a shape they do not have. The price: below
 * six runs no interval reaches 95 % (five runs give at most 93.75 %), and the verdict is then "too few runs".
 */

/** The confidence every verdict in the benchmarks asks for. */
export const PAIRED_CONFIDENCE = 0.95;

/** The sign test's interval for a median, and the coverage it actually has (at least the confidence asked for). */
export interface MedianInterval {
  readonly low: number;
  readonly high: number;
  readonly coverage: number;
}

/** P(B ≤ k) for B ~ Binomial(n, ½), k = 0…n (exact up to floating point for n ≤ 1,000). */
function binomialHalfCdf(n: number): number[] {
  const cdf: number[] = [];
  let term = Math.pow(0.5, n);
  let sum = 0;
  for (let k = 0; k <= n; k++) {
    sum += term;
    cdf.push(sum);
    term = (term * (n - k)) / (k + 1);
  }
  return cdf;
}

/**
 * The sign test's confidence interval for the median of `values`: the narrowest order-statistic interval whose
 * coverage is at least `confidence`; null when even [min, max] falls short (too few values).
 */
export function signTestMedianInterval(
  values: readonly number[],
  confidence = PAIRED_CONFIDENCE,
): MedianInterval | null {
  if (!(confidence > 0 && confidence < 1)) throw new RangeError(`confidence must be in (0, 1) (got ${confidence})`);
  if (values.some((v) => !Number.isFinite(v))) throw new RangeError('values must be finite numbers');
  const n = values.length;
  if (n === 0) return null;
  const sorted = [...values].sort((a, b) => a - b);
  const cdf = binomialHalfCdf(n);
  let best: MedianInterval | null = null;
  // k is 1-based: [x(k), x(n+1−k)]; widening never lowers coverage, so the largest k that reaches it is the answer.
  for (let k = 1; k <= Math.ceil(n / 2); k++) {
    const coverage = 1 - 2 * cdf[k - 1];
    if (coverage < confidence) break;
    best = { low: sorted[k - 1], high: sorted[n - k], coverage };
  }
  return best;
}

export type PairedVerdict = 'worse' | 'better' | 'within the spread' | 'too few runs';

/** A verdict on paired ratios, with the interval it rests on (as ratios, not logs). */
export interface PairedRatioComparison {
  readonly runs: number;
  readonly verdict: PairedVerdict;
  /** The median ratio's interval; null with too few runs. */
  readonly interval: MedianInterval | null;
  readonly geometricMean: number | null;
}

/**
 * Judges ratios (candidate ÷ baseline, one per paired run; above 1 = candidate higher): "worse" when the whole
 * interval of the median log-ratio lies above 0, "better" when below, else "within the spread".
 */
export function comparePairedRatios(ratios: readonly number[], confidence = PAIRED_CONFIDENCE): PairedRatioComparison {
  if (ratios.some((r) => !(r > 0 && Number.isFinite(r))))
    throw new RangeError(`ratios must be finite numbers > 0 (got ${ratios.join(', ')})`);
  const logs = ratios.map(Math.log);
  const geometricMean = geometricMeanOf(ratios);
  const interval = signTestMedianInterval(logs, confidence);
  if (interval === null) return { runs: ratios.length, verdict: 'too few runs', interval, geometricMean };
  const verdict = interval.low > 0 ? 'worse' : interval.high < 0 ? 'better' : 'within the spread';
  const asRatios = { low: Math.exp(interval.low), high: Math.exp(interval.high), coverage: interval.coverage };
  return { runs: ratios.length, verdict, interval: asRatios, geometricMean };
}
