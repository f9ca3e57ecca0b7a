import {
  AWS_LONG_CONTEXT,
  AWS_SHORT_CONTEXT,
  reproducedBand,
  thresholdPerInstanceLoad,
  toleranceFor,
  TOLERANCE_POINTS,
  verdictOf,
  withinPublished,
} from '../../../router/bench/aws-experiments';

describe('when a simulated figure is checked against a published range', () => {
  const p90 = AWS_LONG_CONTEXT.ttftP90; // −37 … −33 %
  test.each([
    [p90.min - TOLERANCE_POINTS - 0.1, false],
    [p90.min - TOLERANCE_POINTS, true],
    [p90.min, true],
    [p90.max, true],
    [p90.max + TOLERANCE_POINTS, true],
    [p90.max + TOLERANCE_POINTS + 0.1, false],
  ])('GIVEN Δ P90 %p %% THEN within AWS long-context range is %p', (value, expected) => {
    expect(withinPublished(value, p90)).toBe(expected);
  });

  test('GIVEN no figure (a run without requests) THEN it is not reproduced', () => {
    expect(withinPublished(null, p90)).toBe(false);
    expect(withinPublished(Number.NaN, p90)).toBe(false);
  });
});

describe('when a replica run is judged on all four figures', () => {
  test('GIVEN the section-1 replica figures (P90 −82 %, hit 84.4 %) THEN P50, P90 and hit are not reproduced and throughput is', () => {
    const v = verdictOf(
      {
        ttftP50DeltaPct: -79.6,
        ttftP90DeltaPct: -82,
        hitRandomPct: 24.8,
        hitPrefixAwarePct: 84.4,
        throughputDeltaPct: 16.8,
      },
      AWS_LONG_CONTEXT,
    );
    expect(v).toEqual({ ttftP50: false, ttftP90: false, hit: false, throughput: true, count: 1 });
  });

  test('GIVEN figures inside every range THEN all four are reproduced', () => {
    const v = verdictOf(
      { ttftP50DeltaPct: -74, ttftP90DeltaPct: -35, hitRandomPct: 25, hitPrefixAwarePct: 82, throughputDeltaPct: 15.5 },
      AWS_LONG_CONTEXT,
    );
    expect(v.count).toBe(4);
  });

  test('GIVEN RANDOM hit in range but PREFIX_AWARE hit out of it THEN the hit rate is not reproduced', () => {
    const v = verdictOf(
      { ttftP50DeltaPct: -14, ttftP90DeltaPct: -30, hitRandomPct: 30, hitPrefixAwarePct: 74, throughputDeltaPct: 1.8 },
      AWS_SHORT_CONTEXT,
    );
    expect(v).toEqual({ ttftP50: true, ttftP90: true, hit: false, throughput: true, count: 3 });
  });
});

describe('when the threshold is set against the per-instance load', () => {
  test('GIVEN 64 clients on 7 instances THEN the notebook threshold 10 is 1.09× the mean in-flight per instance', () => {
    expect(thresholdPerInstanceLoad(10, 64, 7)).toBeCloseTo(70 / 64, 10);
  });

  test('GIVEN threshold equal to clients ÷ instances THEN the ratio is exactly 1', () => {
    expect(thresholdPerInstanceLoad(8, 56, 7)).toBe(1);
  });

  test.each([
    [0, 7],
    [64, 0],
  ])('GIVEN %p clients on %p instances THEN it is refused', (clients, instances) => {
    expect(() => thresholdPerInstanceLoad(10, clients, instances)).toThrow(RangeError);
  });
});

describe('when the band of settings that reproduce a figure is read off a sweep', () => {
  const points = [1, 1.5, 2, 3].map((x) => ({ x }));
  test('GIVEN the figure holds at 1.5× and 2× THEN the band is 1.5×–2×', () => {
    expect(reproducedBand(points, (p) => p.x >= 1.5 && p.x <= 2)).toEqual({ lo: 1.5, hi: 2 });
  });
  test('GIVEN it holds nowhere THEN there is no band', () => {
    expect(reproducedBand(points, () => false)).toBeNull();
  });
});

describe('when the published figure is small', () => {
  const throughput = AWS_SHORT_CONTEXT.throughput; // +1.7 … +2.0 %
  test.each([
    [0, false],
    [1.7 - 0.4625 - 0.01, false],
    [1.7 - 0.4625, true],
    [2 + 0.4625, true],
    [2 + 0.4625 + 0.01, false],
  ])(
    'GIVEN Δ throughput %p %% against AWS short-context +1.7…2.0 %% THEN reproduced is %p (tolerance a quarter of the figure, not 2 points)',
    (value, expected) => {
      expect(toleranceFor(throughput)).toBeCloseTo(0.4625, 10);
      expect(withinPublished(value, throughput)).toBe(expected);
    },
  );

  test('GIVEN a large figure THEN the tolerance is the full 2 points', () => {
    expect(toleranceFor(AWS_LONG_CONTEXT.ttftP90)).toBe(TOLERANCE_POINTS);
  });
});
