import fc from 'fast-check';
import { comparePairedRatios, signTestMedianInterval } from '../../../router/src/report/paired-comparison';

describe('when the sign test bounds a median', () => {
  test.each([
    // n, the widest order statistics that reach 95 %, and their exact coverage 1 − 2·P(B ≤ k − 1)
    [6, 1, 1 - 2 / 64],
    [8, 1, 1 - 2 / 256],
    [9, 2, 1 - (2 * 10) / 512],
    [12, 3, 1 - (2 * (1 + 12 + 66)) / 4096],
  ])('GIVEN %i values THEN the interval is [x(%i), x(n+1−k)] with coverage %f', (n, k, coverage) => {
    const values = Array.from({ length: n }, (_, i) => n - i); // descending: the interval must sort them
    const interval = signTestMedianInterval(values)!;
    expect(interval.low).toBe(k);
    expect(interval.high).toBe(n + 1 - k);
    expect(interval.coverage).toBeCloseTo(coverage, 12);
  });

  test.each([[0], [1], [5]])('GIVEN %i values THEN no interval reaches 95 %', (n) => {
    expect(signTestMedianInterval(Array.from({ length: n }, (_, i) => i))).toBeNull();
  });

  test('GIVEN 5 values at 90 % THEN [min, max] reaches it (93.75 %)', () => {
    expect(signTestMedianInterval([3, 1, 2, 5, 4], 0.9)).toEqual({ low: 1, high: 5, coverage: 1 - 2 / 32 });
  });

  test.each([[0], [1], [Number.NaN]])('GIVEN confidence %p THEN it is refused', (confidence) => {
    expect(() => signTestMedianInterval([1, 2, 3], confidence)).toThrow('confidence must be in (0, 1)');
  });

  test('GIVEN any sample of at least 6 THEN the interval holds the median and lies within the sample', () => {
    fc.assert(
      fc.property(fc.array(fc.double({ min: -10, max: 10, noNaN: true }), { minLength: 6, maxLength: 60 }), (xs) => {
        const sorted = [...xs].sort((a, b) => a - b);
        const interval = signTestMedianInterval(xs)!;
        const median = (sorted[Math.floor((xs.length - 1) / 2)] + sorted[Math.ceil((xs.length - 1) / 2)]) / 2;
        expect(interval.low).toBeLessThanOrEqual(median);
        expect(interval.high).toBeGreaterThanOrEqual(median);
        expect(interval.low).toBeGreaterThanOrEqual(sorted[0]);
        expect(interval.high).toBeLessThanOrEqual(sorted[sorted.length - 1]);
        expect(interval.coverage).toBeGreaterThanOrEqual(0.95);
      }),
      { numRuns: 200 },
    );
  });
});

describe('when paired ratios are judged', () => {
  test('GIVEN six runs all slower (1.01–1.06×) THEN the candidate is worse', () => {
    const c = comparePairedRatios([1.01, 1.06, 1.02, 1.05, 1.03, 1.04]);
    expect(c.verdict).toBe('worse');
    expect(c.interval!.low).toBeCloseTo(1.01, 12);
    expect(c.interval!.high).toBeCloseTo(1.06, 12);
  });

  test('GIVEN nine runs, one faster and eight slower THEN it is still worse (the interval drops the extremes)', () => {
    expect(comparePairedRatios([0.8, 1.01, 1.02, 1.03, 1.04, 1.05, 1.06, 1.07, 1.5]).verdict).toBe('worse');
  });

  test('GIVEN the KV-pressure seeds 1–6 (one run 1.139×, five faster) THEN it is within the spread, not worse', () => {
    const c = comparePairedRatios([0.916, 1.139, 0.843, 0.906, 0.957, 0.935]);
    expect(c.verdict).toBe('within the spread');
    expect(c.interval!.low).toBeCloseTo(0.843, 12);
    expect(c.interval!.high).toBeCloseTo(1.139, 12);
    expect(c.geometricMean).toBeCloseTo(0.9448, 3);
  });

  test('GIVEN six runs all faster THEN it is better', () => {
    expect(comparePairedRatios([0.9, 0.99, 0.95, 0.97, 0.999, 0.8]).verdict).toBe('better');
  });

  test('GIVEN six identical runs (ratio exactly 1) THEN it is within the spread', () => {
    expect(comparePairedRatios([1, 1, 1, 1, 1, 1]).verdict).toBe('within the spread');
  });

  test('GIVEN five runs all slower THEN there are too few runs for 95 %', () => {
    const c = comparePairedRatios([1.1, 1.2, 1.3, 1.4, 1.5]);
    expect(c).toMatchObject({ runs: 5, verdict: 'too few runs', interval: null });
  });

  test.each([[0], [-1], [Number.POSITIVE_INFINITY]])('GIVEN a ratio %p THEN it is refused', (r) => {
    expect(() => comparePairedRatios([1, r])).toThrow('ratios must be finite numbers > 0');
  });

  test('GIVEN any ratios THEN inverting them swaps worse and better', () => {
    const swap = { worse: 'better', better: 'worse' } as Record<string, string>;
    fc.assert(
      fc.property(fc.array(fc.double({ min: 0.5, max: 2, noNaN: true }), { minLength: 0, maxLength: 30 }), (rs) => {
        const verdict = comparePairedRatios(rs).verdict;
        const inverted = comparePairedRatios(rs.map((r) => 1 / r)).verdict;
        expect(inverted).toBe(swap[verdict] ?? verdict);
      }),
      { numRuns: 200 },
    );
  });
});
