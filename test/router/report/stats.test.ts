import fc from 'fast-check';
import {
  cdfPoints,
  distribution,
  geometricMean,
  maxOverMean,
  mean,
  median,
  percentile,
  percentileOfSorted,
} from '../../../router/src/report/stats';

describe('when computing percentiles (linear interpolation between closest ranks)', () => {
  test('GIVEN 1..10 THEN P50 is 5.5, P90 is 9.1, P0 the minimum and P100 the maximum', () => {
    const values = [10, 3, 1, 2, 4, 5, 6, 7, 8, 9];
    expect(percentile(values, 50)).toBeCloseTo(5.5, 12);
    expect(percentile(values, 90)).toBeCloseTo(9.1, 12);
    expect(percentile(values, 0)).toBe(1);
    expect(percentile(values, 100)).toBe(10);
  });

  test('GIVEN one value THEN every percentile is that value; GIVEN none THEN there is no percentile', () => {
    expect(percentile([42], 1)).toBe(42);
    expect(percentile([42], 99)).toBe(42);
    expect(percentile([], 50)).toBeNull();
    expect(mean([])).toBeNull();
  });

  test.each([-0.001, 100.001, Number.NaN])('GIVEN p=%s THEN it is refused', (p) => {
    expect(() => percentileOfSorted([1, 2], p)).toThrow(/between 0 and 100/);
  });

  test('GIVEN any sample THEN percentiles never decrease in p and stay between min and max', () => {
    fc.assert(
      fc.property(
        fc.array(fc.double({ min: -1e6, max: 1e6, noNaN: true }), { minLength: 1, maxLength: 60 }),
        fc.double({ min: 0, max: 100, noNaN: true }),
        fc.double({ min: 0, max: 100, noNaN: true }),
        (values, p, q) => {
          const [lo, hi] = p <= q ? [p, q] : [q, p];
          const a = percentile(values, lo)!;
          const b = percentile(values, hi)!;
          expect(a).toBeLessThanOrEqual(b + 1e-9);
          expect(a).toBeGreaterThanOrEqual(Math.min(...values) - 1e-9);
          expect(b).toBeLessThanOrEqual(Math.max(...values) + 1e-9);
        },
      ),
    );
  });

  test('GIVEN a sample THEN its distribution has count, mean, min, P50/P90/P95/P99 and max', () => {
    expect(distribution([4, 1, 3, 2])).toEqual({
      count: 4,
      mean: 2.5,
      min: 1,
      p50: 2.5,
      p90: expect.closeTo(3.7, 12),
      p95: expect.closeTo(3.85, 12),
      p99: expect.closeTo(3.97, 12),
      max: 4,
    });
    expect(distribution([])).toEqual({
      count: 0,
      mean: null,
      min: null,
      p50: null,
      p90: null,
      p95: null,
      p99: null,
      max: null,
    });
  });
});

describe('when computing CDF points', () => {
  test('GIVEN any sample THEN points rise in value and fraction, start at the minimum and end at (maximum, 1)', () => {
    fc.assert(
      fc.property(
        fc.array(fc.double({ min: 0, max: 1e5, noNaN: true }), { minLength: 1, maxLength: 500 }),
        fc.integer({ min: 2, max: 50 }),
        (values, maxPoints) => {
          const points = cdfPoints(values, maxPoints);
          expect(points.length).toBeLessThanOrEqual(maxPoints);
          expect(points[0].value).toBe(Math.min(...values));
          expect(points[points.length - 1]).toEqual({ value: Math.max(...values), fraction: 1 });
          for (let i = 1; i < points.length; i++) {
            expect(points[i].fraction).toBeGreaterThan(points[i - 1].fraction);
            expect(points[i].value).toBeGreaterThanOrEqual(points[i - 1].value);
          }
        },
      ),
    );
  });

  test('GIVEN 4 values THEN each is a point with fraction k/4; GIVEN none THEN no point', () => {
    expect(cdfPoints([30, 10, 20, 40])).toEqual([
      { value: 10, fraction: 0.25 },
      { value: 20, fraction: 0.5 },
      { value: 30, fraction: 0.75 },
      { value: 40, fraction: 1 },
    ]);
    expect(cdfPoints([])).toEqual([]);
    expect(() => cdfPoints([1], 1)).toThrow(/at least 2/);
  });
});

describe('when computing max over mean', () => {
  test('GIVEN even values THEN 1; GIVEN one instance with everything among four THEN 4; GIVEN zeros or nothing THEN null', () => {
    expect(maxOverMean([5, 5, 5])).toBe(1);
    expect(maxOverMean([8, 0, 0, 0])).toBe(4);
    expect(maxOverMean([0, 0])).toBeNull();
    expect(maxOverMean([])).toBeNull();
  });
});

describe('when taking the geometric mean of ratios', () => {
  test('GIVEN 0.5 and 2 THEN it is 1; GIVEN none THEN there is none', () => {
    expect(geometricMean([0.5, 2])).toBeCloseTo(1, 12);
    expect(geometricMean([2, 8])).toBeCloseTo(4, 12);
    expect(geometricMean([])).toBeNull();
  });

  test.each([0, -1, Number.NaN])('GIVEN %p among the values THEN it is refused', (v) => {
    expect(() => geometricMean([1, v])).toThrow(/positive values only/);
  });
});

describe('when taking a median', () => {
  test('GIVEN values THEN it is the middle one, or the mean of the two middle ones', () => {
    expect(median([3, 1, 2])).toBe(2);
    expect(median([4, 1, 3, 2])).toBe(2.5);
    expect(() => median([])).toThrow('median of no values');
  });
});
