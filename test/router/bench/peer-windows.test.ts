import fc from 'fast-check';
import type { RequestRecord } from '../../../router/src/report';
import { windowSpread, windowSpreadLine } from '../../../router/bench/peer-windows';

/** Records of one run: TTFT per id (null: no first token), the other fields as a simulated run has them. */
function run(ttfts: Record<string, number | null>): RequestRecord[] {
  return Object.entries(ttfts).map(([id, ttftMs]) => ({ id, instance: 'instance-0', sentAtMs: 0, ttftMs, e2eMs: 1 }));
}

const ORDER = ['a', 'b', 'c', 'd', 'e', 'f', 'g'];
const SUBJECT = run({ a: 100, b: 200, c: 300, d: 10, e: 10, f: 10, g: 5 });
const PEERS = [
  run({ a: 100, b: 100, c: 100, d: 20, e: 20, f: 20, g: 5 }),
  run({ a: 50, b: 400, c: 400, d: 10, e: 20, f: 40, g: 5 }),
];

describe('when bench:peers spreads cache-aware against the best peer over windows of requests', () => {
  it('GIVEN two windows of 3 and one request left over THEN each percentile is taken per window against the lowest peer there', () => {
    // Window a–c: P50 200 vs 100 (first peer) = 2; P90 280 vs 100 = 2.8. Window d–f: P50 10 vs 20 = 0.5; P90 10 vs 20 = 0.5.
    const s = windowSpread(ORDER, SUBJECT, PEERS, 3, 1.02);
    expect(s).toMatchObject({ size: 3, windows: 2, leftOver: 1, unmeasured: 0 });
    expect(s.p50!.min).toBeCloseTo(0.5, 12);
    expect(s.p50!.max).toBeCloseTo(2, 12);
    expect(s.p50!.geometricMean).toBeCloseTo(1, 12);
    expect(s.p50!.withinTarget).toBe(1);
    expect(s.p90!.max).toBeCloseTo(2.8, 12);
    expect(s.p90!.geometricMean).toBeCloseTo(Math.sqrt(1.4), 12);
    expect(windowSpreadLine(s)).toBe(
      "- Sampling noise: this run cut into 2 windows of 3 requests in arrival order (requests 0–2, 3–5, …; the last 1 in none), cache-aware's TTFT ÷ the best peer's over the same requests in each window: P50 0.50–2.00× (geometric mean 1.00×, ≤ 1.02× in 1 of 2); P90 0.50–2.80× (geometric mean 1.18×, ≤ 1.02× in 1 of 2).",
    );
  });

  it('GIVEN the windows follow the given order, not the records’ THEN reordering the ids changes the windows', () => {
    const s = windowSpread(['a', 'd', 'e', 'b', 'c', 'f'], SUBJECT, PEERS, 3, 1.02);
    // Window a, d, e: P50 10 vs min(20, 20) = 0.5; window b, c, f: P50 200 vs min(100, 400) = 2, P90 280 vs 100.
    expect(s.p50!.min).toBeCloseTo(0.5, 12);
    expect(s.p50!.max).toBeCloseTo(2, 12);
    expect(s.p90!.max).toBeCloseTo(2.8, 12);
  });

  it('GIVEN a peer without first tokens in a window THEN the best of the others counts; GIVEN cache-aware without any THEN that window is left out', () => {
    const silentPeer = run({ a: null, b: null, c: null, d: 1, e: 1, f: 1 });
    const s = windowSpread(ORDER.slice(0, 6), SUBJECT, [PEERS[0], silentPeer], 3, 1.02);
    // Window a–c: only the first peer has first tokens (2×); window d–f: the silent one's 1 ms is the best (10×).
    expect(s.p50!.min).toBeCloseTo(2, 12);
    expect(s.p50!.max).toBeCloseTo(10, 12);
    const silentSubject = run({ a: 1, b: 1, c: 1, d: null, e: null, f: null });
    const t = windowSpread(ORDER.slice(0, 6), silentSubject, PEERS, 3, 1.02);
    expect(t).toMatchObject({ windows: 2, unmeasured: 1 });
    expect(t.p50!.max).toBeCloseTo(0.01, 12);
    expect(windowSpreadLine(t)).toContain('(1 without a first token on one side left out)');
    expect(windowSpreadLine(windowSpread(['a'], SUBJECT, PEERS, 3, 1.02))).toMatch(/: no window measured\.$/);
  });

  it.each([0, 1.5, Number.NaN])('GIVEN window size %p THEN it is refused, naming the range', (size) => {
    expect(() => windowSpread(ORDER, SUBJECT, PEERS, size, 1.02)).toThrow(/window size must be an integer ≥ 1/);
  });

  it('GIVEN any runs THEN scaling cache-aware’s TTFTs by k scales every ratio by k, and the record order does not matter', () => {
    fc.assert(
      fc.property(
        fc.array(fc.tuple(fc.integer({ min: 1, max: 10_000 }), fc.integer({ min: 1, max: 10_000 })), {
          minLength: 1,
          maxLength: 40,
        }),
        fc.integer({ min: 1, max: 8 }),
        fc.double({ min: 0.1, max: 10, noNaN: true }),
        (pairs, size, k) => {
          const ids = pairs.map((_, i) => `r${i}`);
          const own = ids.map((id, i) => ({ id, ttft: pairs[i][0] }));
          const subject = run(Object.fromEntries(own.map((r) => [r.id, r.ttft])));
          const scaled = run(Object.fromEntries(own.map((r) => [r.id, r.ttft * k])));
          const peer = run(Object.fromEntries(ids.map((id, i) => [id, pairs[i][1]])));
          const base = windowSpread(ids, subject, [peer], size, 1.02);
          const times = windowSpread(ids, [...scaled].reverse(), [[...peer].reverse()], size, 1.02);
          expect(times.windows).toBe(Math.floor(ids.length / size));
          if (base.p50 === null) return expect(times.p50).toBeNull();
          for (const p of ['p50', 'p90'] as const)
            for (const stat of ['min', 'geometricMean', 'max'] as const)
              expect(times[p]![stat]).toBeCloseTo(base[p]![stat] * k, 9);
        },
      ),
    );
  });
});
