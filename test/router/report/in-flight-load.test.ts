import fc from 'fast-check';
import { inFlightLoad } from '../../../router/src/report/in-flight-load';

describe('when measuring in-flight load from request intervals', () => {
  test('GIVEN two overlapping requests in a 10 ms window THEN mean is busy time ÷ 10 and max is 2', () => {
    expect(
      inFlightLoad(
        [
          { startMs: 0, endMs: 6 },
          { startMs: 4, endMs: 8 },
        ],
        0,
        10,
      ),
    ).toEqual({ meanInFlight: 1, maxInFlight: 2 });
  });

  test('GIVEN one request ending exactly when the next starts THEN they are never both in flight', () => {
    expect(
      inFlightLoad(
        [
          { startMs: 0, endMs: 5 },
          { startMs: 5, endMs: 10 },
        ],
        0,
        10,
      ),
    ).toEqual({ meanInFlight: 1, maxInFlight: 1 });
  });

  test('GIVEN intervals reaching outside the window THEN only the overlap counts', () => {
    expect(
      inFlightLoad(
        [
          { startMs: -10, endMs: 5 },
          { startMs: 8, endMs: 30 },
          { startMs: 11, endMs: 12 },
        ],
        0,
        10,
      ),
    ).toEqual({ meanInFlight: 0.7, maxInFlight: 1 });
  });

  test('GIVEN an empty window or no interval THEN the load is zero', () => {
    expect(inFlightLoad([{ startMs: 0, endMs: 5 }], 5, 5)).toEqual({ meanInFlight: 0, maxInFlight: 0 });
    expect(inFlightLoad([], 0, 10)).toEqual({ meanInFlight: 0, maxInFlight: 0 });
  });

  test('GIVEN any intervals THEN max equals a brute-force count and the mean never exceeds it', () => {
    const interval = fc
      .tuple(fc.integer({ min: 0, max: 100 }), fc.integer({ min: 1, max: 30 }))
      .map(([s, d]) => ({ startMs: s, endMs: s + d }));
    fc.assert(
      fc.property(fc.array(interval, { maxLength: 40 }), (intervals) => {
        const load = inFlightLoad(intervals, 0, 130);
        let brute = 0;
        for (let t = 0; t < 130; t += 0.5)
          brute = Math.max(brute, intervals.filter((i) => i.startMs <= t && t < i.endMs).length);
        expect(load.maxInFlight).toBe(brute);
        expect(load.meanInFlight).toBeLessThanOrEqual(load.maxInFlight + 1e-12);
      }),
    );
  });
});
