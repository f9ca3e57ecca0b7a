import fc from 'fast-check';
import { fmix32 } from '../../../router/src/policy/hashing';
import {
  InstanceHashCache,
  rendezvousRanking,
  rendezvousScore,
  weightedRendezvousScore,
} from '../../../router/src/policy/rendezvous';
import type { InstanceView } from '../../../router/src/policy';

const KEYS = 4000;

function views(n: number): InstanceView[] {
  return Array.from({ length: n }, (_, i) => ({ id: `http://10.0.1.${i + 1}:8000`, healthy: true, inFlight: 0 }));
}

/** Binomial tolerance: 4.5 standard deviations of a count over `n` trials of probability `p`, plus one. */
function tolerance(n: number, p: number): number {
  return 4.5 * Math.sqrt(n * p * (1 - p)) + 1;
}

describe('when rendezvous hashing is weighted', () => {
  it('GIVEN weights w_i THEN each instance wins a share of keys within binomial tolerance of w_i / Σw', () => {
    fc.assert(
      fc.property(
        fc.array(fc.double({ min: 0.05, max: 1, noNaN: true }), { minLength: 2, maxLength: 7 }),
        fc.integer(),
        (weights, seed) => {
          const instances = views(weights.length);
          const hashes = new InstanceHashCache();
          const wins = new Array<number>(weights.length).fill(0);
          const weightOf = (v: InstanceView) => weights[instances.indexOf(v)];
          for (let k = 0; k < KEYS; k++) {
            const winner = rendezvousRanking(fmix32(seed + k * 0x9e3779b1) | 0, instances, hashes, weightOf)[0];
            wins[instances.indexOf(winner)]++;
          }
          const total = weights.reduce((a, b) => a + b, 0);
          weights.forEach((w, i) =>
            expect(Math.abs(wins[i] - (KEYS * w) / total)).toBeLessThanOrEqual(tolerance(KEYS, w / total)),
          );
        },
      ),
      { numRuns: 20, seed: 31 },
    );
  });

  it('GIVEN equal weights THEN the ranking is exactly the unweighted one', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 9 }),
        fc.integer(),
        fc.double({ min: 1e-6, max: 1e6, noNaN: true }),
        (n, key, w) => {
          const instances = views(n);
          const unweighted = rendezvousRanking(key, instances).map((v) => v.id);
          expect(rendezvousRanking(key, instances, new InstanceHashCache(), () => w).map((v) => v.id)).toEqual(
            unweighted,
          );
        },
      ),
      { numRuns: 300, seed: 31 },
    );
  });

  it('GIVEN any two 32-bit scores and one weight THEN the weighted scores keep their order, and equal scores stay equal (ties go to the id)', () => {
    const u32 = fc.integer({ min: 0, max: 0xffffffff });
    fc.assert(
      fc.property(u32, u32, fc.double({ min: 1e-6, max: 1e6, noNaN: true }), (a, b, w) => {
        const wa = weightedRendezvousScore(a, w);
        const wb = weightedRendezvousScore(b, w);
        expect(Math.sign(wa - wb)).toBe(Math.sign(a - b));
      }),
      { numRuns: 2000, seed: 31 },
    );
    // Adjacent scores at both ends and in the middle of the range.
    for (const a of [0, 1, 2, 0x7fffffff, 0x80000000, 0xfffffffd, 0xfffffffe]) {
      expect(weightedRendezvousScore(a + 1, 1)).toBeGreaterThan(weightedRendezvousScore(a, 1));
      expect(weightedRendezvousScore(a + 1, 0.317)).toBeGreaterThan(weightedRendezvousScore(a, 0.317));
    }
  });

  it('GIVEN a weight of 0, a negative or a non-finite one THEN that instance ranks last', () => {
    const top = rendezvousScore(0, 0) >>> 0;
    for (const w of [0, -1, Number.NaN, Infinity]) expect(weightedRendezvousScore(top, w)).toBe(-Infinity);
    const instances = views(3);
    const ranked = rendezvousRanking(7, instances, new InstanceHashCache(), (v) => (v === instances[0] ? 0 : 1));
    expect(ranked[2]).toBe(instances[0]);
  });
});
