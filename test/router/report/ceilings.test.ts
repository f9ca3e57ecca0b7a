import fc from 'fast-check';
import { CeilingTracker, computeCeilings, scoreAgainstCeiling } from '../../../router/src/report/ceilings';
import { placementHitRate } from '../../../router/src/report/placement-cache-model';
import { blockHashes } from '../../../router/src/state/block-hash';

/** A prompt of whole 16-token blocks named by letters: 'ab' = block a then block b (64 characters each). */
function prompt(blocks: string, extraChars = 0): string {
  return Array.from(blocks, (c) => c.repeat(64)).join('') + 'z'.repeat(extraChars);
}

describe('when computing cache-hit ceilings', () => {
  test('GIVEN a repeated 3-block prompt THEN the second time hits 2 blocks (the last token is always recomputed)', () => {
    const tracker = new CeilingTracker({ fleetCapacityBlocks: 100 });
    expect(tracker.observe(prompt('abc'))).toEqual({ promptTokens: 48, idealHitTokens: 0, fleetHitTokens: 0 });
    expect(tracker.observe(prompt('abc'))).toEqual({ promptTokens: 48, idealHitTokens: 32, fleetHitTokens: 32 });
    expect(tracker.observe(prompt('abc', 4))).toEqual({ promptTokens: 49, idealHitTokens: 48, fleetHitTokens: 48 });
    expect(tracker.observe(prompt('abd'))).toEqual({ promptTokens: 48, idealHitTokens: 32, fleetHitTokens: 32 });
    expect(tracker.observe(prompt('xbc'))).toEqual({ promptTokens: 48, idealHitTokens: 0, fleetHitTokens: 0 });
    expect(tracker.result()).toMatchObject({
      requests: 5,
      promptTokens: 241,
      idealHitTokens: 112,
      fleetHitTokens: 112,
      distinctBlocks: 7,
    });
    expect(tracker.result().idealHitRate).toBeCloseTo(112 / 241, 12);
  });

  test('GIVEN a warm-up WHEN it ends THEN the counts restart but the cached prefixes stay', () => {
    const tracker = new CeilingTracker({ fleetCapacityBlocks: 100 });
    tracker.observe(prompt('abc'));
    tracker.endWarmup();
    expect(tracker.result()).toMatchObject({ requests: 0, promptTokens: 0, idealHitRate: null });
    expect(tracker.observe(prompt('abc'))).toEqual({ promptTokens: 48, idealHitTokens: 32, fleetHitTokens: 32 });
    expect(tracker.result()).toMatchObject({
      requests: 1,
      promptTokens: 48,
      idealHitTokens: 32,
      fleetHitTokens: 32,
      distinctBlocks: 3,
    });
  });

  test('GIVEN a fleet cache smaller than the working set THEN the fleet ceiling falls below the ideal', () => {
    const prompts = [prompt('abcd'), prompt('efgh'), prompt('abcd'), prompt('efgh')];
    const small = computeCeilings(prompts, (p) => p, { fleetCapacityBlocks: 4 });
    expect(small.idealHitTokens).toBe(2 * 48);
    expect(small.fleetHitTokens).toBe(0);
    const large = computeCeilings(prompts, (p) => p, { fleetCapacityBlocks: 8 });
    expect(large.fleetHitTokens).toBe(large.idealHitTokens);
  });

  test('GIVEN no prompt THEN the rates are unknown, not zero', () => {
    expect(computeCeilings([], (p: string) => p, { fleetCapacityBlocks: 1 })).toMatchObject({
      idealHitRate: null,
      fleetHitRate: null,
    });
    expect(scoreAgainstCeiling(0.5, null)).toBeNull();
  });

  test('GIVEN hashes computed by the caller THEN observeBlocks counts exactly like observe', () => {
    const a = new CeilingTracker({ fleetCapacityBlocks: 10 });
    const b = new CeilingTracker({ fleetCapacityBlocks: 10 });
    for (const p of [prompt('abc'), prompt('abd', 7), prompt('abc')]) {
      expect(b.observeBlocks(blockHashes(p), Math.ceil(p.length / 4))).toEqual(a.observe(p));
    }
  });

  // Prompts drawn from a few shared stems, so hits happen.
  const promptsArb = fc.array(
    fc.tuple(fc.constantFrom('ab', 'ac', 'abd', 'e', 'abcdef', 'fa'), fc.integer({ min: 0, max: 100 })),
    { minLength: 1, maxLength: 40 },
  );

  test('GIVEN any workload THEN 0 ≤ fleet ≤ ideal ≤ 1, and the fleet ceiling never falls when capacity grows', () => {
    fc.assert(
      fc.property(promptsArb, fc.integer({ min: 0, max: 12 }), (items, capacity) => {
        const prompts = items.map(([blocks, extra]) => prompt(blocks, extra));
        const smaller = computeCeilings(prompts, (p) => p, { fleetCapacityBlocks: capacity });
        const larger = computeCeilings(prompts, (p) => p, { fleetCapacityBlocks: capacity + 1 });
        expect(smaller.fleetHitRate!).toBeGreaterThanOrEqual(0);
        expect(smaller.fleetHitTokens).toBeLessThanOrEqual(smaller.idealHitTokens);
        expect(smaller.idealHitRate!).toBeLessThanOrEqual(1);
        expect(larger.fleetHitTokens).toBeGreaterThanOrEqual(smaller.fleetHitTokens);
      }),
    );
  });

  test('GIVEN any placement on instances of a total capacity THEN no instance split beats the ideal', () => {
    fc.assert(
      fc.property(
        promptsArb,
        fc.integer({ min: 1, max: 4 }),
        fc.integer({ min: 1, max: 6 }),
        (items, instances, perInstance) => {
          const prompts = items.map(([blocks, extra]) => prompt(blocks, extra));
          const ceilings = computeCeilings(prompts, (p) => p, { fleetCapacityBlocks: instances * perInstance });
          const placed = placementHitRate(prompts, (p) => p, {
            instances,
            capacityBlocksPerInstance: perInstance,
            place: (_p, i) => i % instances,
          });
          expect(placed.hitTokens).toBeLessThanOrEqual(ceilings.idealHitTokens);
          expect(placed.requestsPerInstance.reduce((a, b) => a + b, 0)).toBe(prompts.length);
        },
      ),
    );
  });

  test('GIVEN a placement rule returning a bad instance THEN it is refused', () => {
    expect(() =>
      placementHitRate([prompt('a')], (p) => p, { instances: 2, capacityBlocksPerInstance: 1, place: () => 2 }),
    ).toThrow(/outside 0..1/);
  });

  test('GIVEN a hit rate and a fleet ceiling THEN the score is their ratio', () => {
    const ceilings = computeCeilings([prompt('abc'), prompt('abc')], (p) => p, { fleetCapacityBlocks: 10 });
    expect(scoreAgainstCeiling(ceilings.fleetHitRate! / 2, ceilings)).toBeCloseTo(0.5, 12);
  });
});
