import fc from 'fast-check';
import { runSearches, sizeSearch, type SizeSearchResult } from '../../../router/src/plan/size-search';

/** Runs one search against a verdict function; returns the result and the sizes it asked for, in order. */
function drive(lo: number, hi: number, meets: (n: number) => boolean): { result: SizeSearchResult; asked: number[] } {
  const search = sizeSearch(lo, hi);
  const asked: number[] = [];
  let step = search.next();
  while (!step.done) {
    asked.push(step.value);
    step = search.next({ meets: meets(step.value), margin: meets(step.value) ? 0.5 : 2 });
  }
  return { result: step.value, asked };
}

const exhaustiveMin = (lo: number, hi: number, meets: (n: number) => boolean): number | null => {
  for (let n = lo; n <= hi; n++) if (meets(n)) return n;
  return null;
};

describe('when the fewest instances meeting the SLOs are searched', () => {
  test('GIVEN a monotone curve (every size from a threshold on meets) THEN the answer is the threshold, with at most log2(range) + 2 sizes measured and none twice', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 64 }),
        fc.integer({ min: 0, max: 64 }),
        fc.integer({ min: 1, max: 80 }),
        (lo, span, threshold) => {
          const hi = lo + span;
          const { result, asked } = drive(lo, hi, (n) => n >= threshold);
          expect(result.minInstances).toBe(exhaustiveMin(lo, hi, (n) => n >= threshold));
          expect(result.nonMonotone).toEqual([]);
          expect(new Set(asked).size).toBe(asked.length);
          expect(asked.length).toBeLessThanOrEqual(Math.ceil(Math.log2(span + 1)) + 3);
        },
      ),
      { numRuns: 500 },
    );
  });

  test('GIVEN any curve THEN the answer meets, every measured size below it fails, and each reported non-monotone pair is real', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 8 }),
        fc.array(fc.boolean(), { minLength: 1, maxLength: 24 }),
        (lo, curve) => {
          const hi = lo + curve.length - 1;
          const meets = (n: number) => curve[n - lo];
          const { result, asked } = drive(lo, hi, meets);
          if (result.minInstances === null) {
            expect(meets(hi)).toBe(false);
          } else {
            expect(meets(result.minInstances)).toBe(true);
            for (const n of asked) if (n < result.minInstances) expect(meets(n)).toBe(false);
          }
          for (const p of result.nonMonotone) {
            expect(p.smaller).toBeLessThan(p.larger);
            expect(meets(p.smaller) && !meets(p.larger)).toBe(true);
          }
          // Once the curve shows it is not monotone, every smaller size is measured: the answer is the exhaustive one.
          if (result.nonMonotone.length > 0) expect(result.minInstances).toBe(exhaustiveMin(lo, hi, meets));
        },
      ),
      { numRuns: 1000 },
    );
  });

  test('GIVEN a curve that meets at 2, fails at 5 and meets again from 4 THEN the upper neighbour of the bisection’s answer exposes it', () => {
    const curve: Record<number, boolean> = {
      1: false,
      2: true,
      3: false,
      4: true,
      5: false,
      6: true,
      7: true,
      8: true,
    };
    const { result } = drive(1, 8, (n) => curve[n]);
    expect(result.minInstances).toBe(2);
    expect(result.nonMonotone).toEqual([{ smaller: 2, larger: 3 }]);
  });

  test('GIVEN the largest size fails THEN nothing else is measured and the answer is null', () => {
    const { result, asked } = drive(1, 16, () => false);
    expect(result.minInstances).toBeNull();
    expect(asked).toEqual([16]);
  });

  test.each([
    [0, 4],
    [3, 2],
    [1.5, 4],
  ])('GIVEN the range %p..%p THEN it is refused', (lo, hi) => {
    expect(() => sizeSearch(lo, hi).next()).toThrow('a size search needs integers 1 ≤ lo ≤ hi');
  });
});

describe('when several searches share one run budget', () => {
  test('GIVEN two searches THEN each round measures one size of each together, and the outcomes are each search alone', async () => {
    const rounds: number[][] = [];
    const outcomes = await runSearches(
      [
        { key: 'a', search: sizeSearch(1, 16), runsPerSize: 1 },
        { key: 'b', search: sizeSearch(2, 16), runsPerSize: 3 },
      ],
      async (probes) => {
        rounds.push(probes.map((p) => p.instances));
        return probes.map((p) => ({ meets: p.instances >= (p.key === 'a' ? 5 : 9), margin: 1 }));
      },
      1000,
    );
    expect(outcomes.map((o) => o.result?.minInstances)).toEqual([5, 9]);
    expect(rounds[0]).toEqual([16, 16]);
  });

  test('GIVEN a budget too small to finish THEN the search that would exceed it stops unfinished, and the budget is never exceeded', async () => {
    let runs = 0;
    const outcomes = await runSearches(
      [{ key: 'sweep', search: sizeSearch(1, 64), runsPerSize: 9 }],
      async (probes) => {
        runs += probes.length * 9;
        return probes.map((p) => ({ meets: p.instances >= 20, margin: 1 }));
      },
      30,
    );
    expect(runs).toBeLessThanOrEqual(30);
    expect(outcomes[0]).toMatchObject({ key: 'sweep', result: null, outOfBudget: true });
  });
});

describe('when every size is measured (exhaustive)', () => {
  test('GIVEN any curve THEN every size is measured once, in order, and the answer is the smallest that meets', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 8 }),
        fc.array(fc.boolean(), { minLength: 1, maxLength: 16 }),
        (lo, curve) => {
          const hi = lo + curve.length - 1;
          const search = sizeSearch(lo, hi, true);
          const asked: number[] = [];
          let step = search.next();
          while (!step.done) {
            asked.push(step.value);
            step = search.next({ meets: curve[step.value - lo], margin: 1 });
          }
          expect(asked).toEqual(curve.map((_, i) => lo + i));
          expect(step.value.minInstances).toBe(exhaustiveMin(lo, hi, (n) => curve[n - lo]));
        },
      ),
    );
  });
});
