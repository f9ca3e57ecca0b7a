import fc from 'fast-check';
import { HitArrivals } from '../../../../router/src/policy/stages/hit-arrivals';

describe('when requests bound to an instance are counted as a rate', () => {
  it('GIVEN a window of 0 or less THEN it is refused with the value named', () => {
    expect(() => new HitArrivals(0)).toThrow('windowMs must be > 0 (got 0)');
    expect(() => new HitArrivals(-1)).toThrow('windowMs must be > 0 (got -1)');
    expect(new HitArrivals(1).ratePerMs('a', 0)).toBe(0);
  });

  it('GIVEN a record exactly one window old THEN it is out, and one a millisecond younger is in', () => {
    // GIVEN the run started long before, so the rate divides by the whole window
    const hits = new HitArrivals(1000);
    hits.record('other', 0);
    hits.record('a', 5000);
    hits.record('a', 5001);
    // WHEN read (in time order, as the router reads) THEN a record counts until exactly one window has passed
    expect(hits.ratePerMs('a', 5999)).toBe(2 / 1000);
    expect(hits.ratePerMs('a', 6000)).toBe(1 / 1000);
    expect(hits.ratePerMs('a', 6001)).toBe(0);
  });

  it('GIVEN a run younger than the window THEN the rate divides by its age, not the window', () => {
    const hits = new HitArrivals(60_000);
    hits.record('a', 1000);
    hits.record('a', 4000);
    hits.record('a', 11_000);
    expect(hits.ratePerMs('a', 11_000)).toBe(3 / 10_000);
    expect(hits.ratePerMs('b', 11_000)).toBe(0);
  });

  it('GIVEN any sorted record times on a few instances THEN each rate is its count within the window over min(window, age)', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 5000 }),
        fc.array(fc.tuple(fc.integer({ min: 0, max: 400 }), fc.constantFrom('a', 'b', 'c')), {
          minLength: 1,
          maxLength: 400,
        }),
        fc.integer({ min: 0, max: 6000 }),
        (windowMs, steps, after) => {
          const hits = new HitArrivals(windowMs);
          let now = 0;
          const times: [number, string][] = [];
          for (const [step, id] of steps) {
            now += step;
            hits.record(id, now);
            times.push([now, id]);
          }
          const readAt = now + after;
          const age = Math.max(1, Math.min(windowMs, readAt - times[0][0]));
          for (const id of ['a', 'b', 'c']) {
            const count = times.filter(([t, i]) => i === id && t > readAt - windowMs).length;
            expect(hits.ratePerMs(id, readAt)).toBeCloseTo(count / age, 12);
          }
        },
      ),
      { numRuns: 150 },
    );
  });
});
