import fc from 'fast-check';
import { parseSlo, parseSlos, SLO_GRAMMAR, sloMargin, sloRatio, type Slo } from '../../../router/src/plan/slo';
import type { StrategySummary } from '../../../router/src/report/report-model';

/** A summary with only the figures SLOs read. */
function summary(ttftP90: number | null, errors = 0, requests = 100): StrategySummary {
  const dist = {
    count: requests,
    mean: ttftP90,
    min: 0,
    p50: ttftP90,
    p90: ttftP90,
    p95: ttftP90,
    p99: ttftP90,
    max: ttftP90,
  };
  return {
    requests,
    errors,
    ttftMs: dist,
    e2eMs: { ...dist, p90: ttftP90 === null ? null : ttftP90 * 10 },
  } as unknown as StrategySummary;
}

describe('when an SLO is parsed', () => {
  test.each([
    ['p90-ttft<=1.5s', { kind: 'latency', percentile: 'p90', metric: 'ttft', maxMs: 1500 }],
    ['p50-ttft<=800ms', { kind: 'latency', percentile: 'p50', metric: 'ttft', maxMs: 800 }],
    ['P99-E2E <= 20s', { kind: 'latency', percentile: 'p99', metric: 'e2e', maxMs: 20000 }],
    ['p90-e2e<=.5s', { kind: 'latency', percentile: 'p90', metric: 'e2e', maxMs: 500 }],
    ['p95-ttft<=800ms', { kind: 'latency', percentile: 'p95', metric: 'ttft', maxMs: 800 }],
    ['error-rate<=1%', { kind: 'error-rate', maxFraction: 0.01 }],
    ['error-rate<=0.02', { kind: 'error-rate', maxFraction: 0.02 }],
    ['error-rate<=0%', { kind: 'error-rate', maxFraction: 0 }],
  ])('GIVEN %p THEN it reads as %p', (raw, expected) => {
    expect(parseSlo(raw)).toMatchObject(expected);
  });

  test.each([
    ['p90-ttft<1.5s', "the comparison must be '<='"],
    ['p90-ttft>=1.5s', "the comparison must be '<='"],
    ['p90-ttft 1.5s', "no '<='"],
    ['p97-ttft<=1s', 'the percentile "p97" is not one of p50, p90, p95, p99'],
    ['p90-ttft<=2sec', 'the unit "sec" of "2sec" is not one of ms, s (e.g. 800ms, 1.5s)'],
    ['p90-ttft<=2 min', 'the unit "min" of "2 min" is not one of ms, s'],
    ['p90-itl<=1s', 'the metric "itl" is not one of ttft, e2e'],
    ['p90<=1s', 'the figure "p90" is not PERCENTILE-METRIC or error-rate'],
    ['p90-ttft-x<=1s', 'is not PERCENTILE-METRIC'],
    ['p90-ttft<=1.5', 'the bound "1.5" has no unit (ms or s)'],
    ['p90-ttft<=0s', 'is not a positive number of s'],
    ['p90-ttft<=-1s', 'is not a positive number of s'],
    ['p90-ttft<=1e3ms', 'is not a positive number of ms'],
    ['error-rate<=x', 'is not a number or a percentage'],
    ['error-rate<=101%', 'is above 100 %'],
    ['error-rate<=2', 'is above 1'],
  ])('GIVEN %p THEN the error names the part (%p) and gives the grammar', (raw, part) => {
    expect(() => parseSlo(raw)).toThrow(part);
    expect(() => parseSlo(raw)).toThrow(SLO_GRAMMAR);
  });

  test('GIVEN no SLO, or one figure bounded twice THEN the list is refused', () => {
    expect(() => parseSlos([])).toThrow('plan needs at least one --slo');
    expect(() => parseSlos(['p90-ttft<=1s', 'p90-ttft<=2s'])).toThrow('--slo bounds p90-ttft twice');
    expect(parseSlos(['p90-ttft<=1s', 'p90-e2e<=2s', 'error-rate<=1%'])).toHaveLength(3);
  });

  test('GIVEN any latency bound THEN its canonical text parses back to the same SLO', () => {
    fc.assert(
      fc.property(
        fc.constantFrom('p50', 'p90', 'p99'),
        fc.constantFrom('ttft', 'e2e'),
        fc.integer({ min: 1, max: 600_000 }),
        fc.boolean(),
        (p, m, ms, inSeconds) => {
          const slo = parseSlo(inSeconds ? `${p}-${m}<=${ms / 1000}s` : `${p}-${m}<=${ms}ms`);
          expect(slo).toMatchObject({ maxMs: ms });
          expect(parseSlo(slo.text)).toEqual(slo);
        },
      ),
    );
  });
});

describe('when a run is held against SLOs', () => {
  const p90 = parseSlo('p90-ttft<=1s');
  const errors = parseSlo('error-rate<=1%');

  test('GIVEN a P90 at, below and above the bound THEN the ratio is 1, below 1 and above 1', () => {
    expect(sloRatio(p90, summary(1000))).toBe(1);
    expect(sloRatio(p90, summary(999))).toBeLessThan(1);
    expect(sloRatio(p90, summary(1001))).toBeGreaterThan(1);
  });

  test('GIVEN no successful request (no P90) THEN the run is infinitely far from the SLO', () => {
    expect(sloRatio(p90, summary(null))).toBe(Infinity);
  });

  test('GIVEN several SLOs THEN the margin is the worst ratio; a zero error bound is met only by no errors', () => {
    const slos: Slo[] = [p90, errors];
    expect(sloMargin(slos, summary(500, 2))).toBe(2);
    expect(sloMargin(slos, summary(500, 0))).toBe(0.5);
    const none = parseSlo('error-rate<=0%');
    expect(sloRatio(none, summary(500, 0))).toBe(0);
    expect(sloRatio(none, summary(500, 1))).toBe(Infinity);
  });
});
