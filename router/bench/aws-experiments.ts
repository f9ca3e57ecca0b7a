/**
 * AWS's two published PREFIX_AWARE experiments (PREFIX_AWARE against RANDOM, Llama 3.1 70B on 7 × ml.p5.48xlarge;
 * DESIGN.md §5) as ranges, and the checks `npm run bench:sim` applies to its replicas of them. Pure: no I/O.
 */

/** A published figure as a range of percent (or percentage points); a "≈" figure has min = max. */
export interface PublishedRange {
  readonly min: number;
  readonly max: number;
}

/** The four figures AWS published for each experiment, against RANDOM. */
export interface PublishedFigures {
  /** Δ TTFT P50, percent (negative: faster). */
  readonly ttftP50: PublishedRange;
  readonly ttftP90: PublishedRange;
  /** Engine cache hit rate under RANDOM and under PREFIX_AWARE, percent. */
  readonly hitRandom: PublishedRange;
  readonly hitPrefixAware: PublishedRange;
  /** Δ output throughput, percent. */
  readonly throughput: PublishedRange;
}

export const AWS_LONG_CONTEXT: PublishedFigures = {
  ttftP50: { min: -77, max: -71 },
  ttftP90: { min: -37, max: -33 },
  hitRandom: { min: 25, max: 25 },
  hitPrefixAware: { min: 82, max: 82 },
  throughput: { min: 15, max: 16 },
};

export const AWS_SHORT_CONTEXT: PublishedFigures = {
  ttftP50: { min: -16, max: -13 },
  ttftP90: { min: -37, max: -24 },
  hitRandom: { min: 30, max: 30 },
  hitPrefixAware: { min: 80, max: 80 },
  throughput: { min: 1.7, max: 2 },
};

/**
 * Points a simulated figure may sit outside the published range and still count as reproduced: AWS rounds
 * ("≈25 %"), and a seed or a minute more moves ours by about that much.
 */
export const TOLERANCE_POINTS = 2;

/**
 * The tolerance for one published figure: TOLERANCE_POINTS, but never more than a quarter of the figure's
 * magnitude, so a small figure (+1.7…2.0 % throughput) is not "reproduced" by a simulated 0 % or by the wrong sign.
 */
export function toleranceFor(range: PublishedRange): number {
  return Math.min(TOLERANCE_POINTS, Math.abs(range.min + range.max) / 8);
}

export function withinPublished(value: number | null, range: PublishedRange, tolerance = toleranceFor(range)): boolean {
  return value !== null && Number.isFinite(value) && value >= range.min - tolerance && value <= range.max + tolerance;
}

/** One replica run's four figures against RANDOM (percent; hit rates 0–100). */
export interface ReplicaFigures {
  readonly ttftP50DeltaPct: number | null;
  readonly ttftP90DeltaPct: number | null;
  readonly hitRandomPct: number | null;
  readonly hitPrefixAwarePct: number | null;
  readonly throughputDeltaPct: number | null;
}

export interface ReplicaVerdict {
  readonly ttftP50: boolean;
  readonly ttftP90: boolean;
  /** Both hit rates (RANDOM's and PREFIX_AWARE's) within their ranges. */
  readonly hit: boolean;
  readonly throughput: boolean;
  /** How many of the four are reproduced. */
  readonly count: number;
}

export function verdictOf(figures: ReplicaFigures, published: PublishedFigures): ReplicaVerdict {
  const ttftP50 = withinPublished(figures.ttftP50DeltaPct, published.ttftP50);
  const ttftP90 = withinPublished(figures.ttftP90DeltaPct, published.ttftP90);
  const hit =
    withinPublished(figures.hitRandomPct, published.hitRandom) &&
    withinPublished(figures.hitPrefixAwarePct, published.hitPrefixAware);
  const throughput = withinPublished(figures.throughputDeltaPct, published.throughput);
  return { ttftP50, ttftP90, hit, throughput, count: [ttftP50, ttftP90, hit, throughput].filter(Boolean).length };
}

/**
 * ConcurrencyThreshold ÷ the mean in-flight requests per instance of a closed loop (clients ÷ instances): below
 * about 1 the affine instance is at the threshold much of the time and requests spill; well above it they
 * almost never do. The one axis on which settings of different client counts compare.
 */
export function thresholdPerInstanceLoad(concurrencyThreshold: number, clients: number, instances: number): number {
  if (!(clients > 0) || !(instances > 0))
    throw new RangeError(`clients (${clients}) and instances (${instances}) must be > 0`);
  return concurrencyThreshold / (clients / instances);
}

/** The stretch [lo, hi] of x over which `ok` holds at every measured point between, or null if at none. */
export function reproducedBand<T extends { readonly x: number }>(
  points: readonly T[],
  ok: (p: T) => boolean,
): { lo: number; hi: number } | null {
  const hits = points.filter(ok).map((p) => p.x);
  return hits.length === 0 ? null : { lo: Math.min(...hits), hi: Math.max(...hits) };
}
