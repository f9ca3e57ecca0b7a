import { builtinProfile, type EngineProfile } from '../../../router/src/emulator/engine-profile';
import { engineGrid, engineGridPoint, type EngineGridPoint } from '../../../router/src/plan/engine-grid';
import { searchEngineGrid, type EngineSearchCache } from '../../../router/src/plan/engine-search';
import { bestPreferringProfileEngine, type RunRequest, type SizedRun } from '../../../router/src/plan/run-cache';
import { parsePolicySpec } from '../../../router/src/policy/policy-spec';

const p5 = builtinProfile('p5-llama-3.1-70b');
const keys = (grid: readonly EngineGridPoint[]) => grid.map((g) => g.key);

describe('when plan builds its engine grid', () => {
  test('GIVEN the p5 profile THEN the budget halves and doubles around 8,192 and the cap is off or 4 % of the context, the profile first', () => {
    const grid = engineGrid(p5, {});
    expect(keys(grid)).toEqual([
      'max-num-batched-tokens=8192&long-prefill-token-threshold=0',
      'max-num-batched-tokens=8192&long-prefill-token-threshold=5242',
      'max-num-batched-tokens=4096&long-prefill-token-threshold=0',
      // 4096 with a 5242 cap is 4096 without one: a request never gets more than the budget in a step.
      'max-num-batched-tokens=16384&long-prefill-token-threshold=0',
      'max-num-batched-tokens=16384&long-prefill-token-threshold=5242',
    ]);
    expect(grid.map((g) => g.base)).toEqual([true, false, false, false, false]);
    expect(grid[0].profile).toBe(p5);
    expect(grid[4].profile).toMatchObject({ maxNumBatchedTokens: 16384, longPrefillTokenThreshold: 5242 });
  });

  test('GIVEN an argument held with --engine-arg THEN only the other one is searched', () => {
    const held = { ...p5, maxNumBatchedTokens: 12000 };
    expect(keys(engineGrid(held, { 'max-num-batched-tokens': 12000 }))).toEqual([
      'max-num-batched-tokens=12000&long-prefill-token-threshold=0',
      'max-num-batched-tokens=12000&long-prefill-token-threshold=5242',
    ]);
    expect(keys(engineGrid(p5, { 'long-prefill-token-threshold': 0 }))).toEqual([
      'max-num-batched-tokens=8192&long-prefill-token-threshold=0',
      'max-num-batched-tokens=4096&long-prefill-token-threshold=0',
      'max-num-batched-tokens=16384&long-prefill-token-threshold=0',
    ]);
  });

  test.each([
    // GIVEN max-num-seqs THEN a halved budget below it is not a point (vLLM refuses budget < max-num-seqs).
    [4096, true],
    [4097, false],
  ])('GIVEN max-num-seqs %p THEN the halved budget 4096 is in the grid: %p', (maxNumSeqs, halved) => {
    const profile: EngineProfile = { ...p5, maxNumSeqs };
    expect(keys(engineGrid(profile, {})).some((k) => k.startsWith('max-num-batched-tokens=4096&'))).toBe(halved);
  });

  test('GIVEN a point the grid dropped as an equal THEN engineGridPoint finds the one kept', () => {
    const grid = engineGrid(p5, {});
    expect(engineGridPoint(grid, { 'max-num-batched-tokens': 4096, 'long-prefill-token-threshold': 5242 })?.key).toBe(
      'max-num-batched-tokens=4096&long-prefill-token-threshold=0',
    );
    expect(engineGridPoint(grid, { 'max-num-batched-tokens': 1000, 'long-prefill-token-threshold': 0 })).toBe(
      undefined,
    );
  });
});

/** A cache whose runs meet the SLOs where `meets(key, size)` says, counting what it simulated. */
function fakeCache(meets: (key: string, size: number) => boolean) {
  const simulated: string[] = [];
  const cache: EngineSearchCache & { simulated: string[] } = {
    simulated,
    runs: 0,
    get: (r: RunRequest) => (simulated.includes(`${r.engine!.key}@${r.instances}`) ? run(r) : undefined),
    measure: async (requests: readonly RunRequest[]) => {
      for (const r of requests) {
        const id = `${r.engine!.key}@${r.instances}`;
        if (!simulated.includes(id)) {
          simulated.push(id);
          cache.runs++;
        }
      }
      return requests.map(run);
    },
  };
  function run(r: RunRequest): SizedRun {
    return { instances: r.instances, margin: meets(r.engine!.key, r.instances) ? 0.9 : 1.1 } as SizedRun;
  }
  return cache;
}

describe('when plan searches the engine grid below an answer', () => {
  const grid = engineGrid(p5, {});
  const [base, capped, halved, doubled, doubledCapped] = grid.map((g) => g.key);
  const policy = parsePolicySpec('random');

  test('GIVEN a point that meets one size below and misses two below THEN the answer drops one size, only that point goes lower, and every point runs at the answer', async () => {
    // Sizes each point needs: the base 5, the halved budget 4, the others 6.
    const need: Record<string, number> = { [base]: 5, [halved]: 4, [capped]: 6, [doubled]: 6, [doubledCapped]: 6 };
    const cache = fakeCache((key, size) => size >= need[key]);
    const [result] = await searchEngineGrid([{ policy, minInstances: 5, floor: 1, max: 8 }], grid, cache, 100);
    expect(result).toEqual({ minInstances: 4, outOfBudget: false });
    expect(cache.simulated.sort()).toEqual(
      [
        ...[capped, halved, doubled, doubledCapped].map((k) => `${k}@4`),
        `${halved}@3`,
        `${base}@4`, // the answer's size gets every point, the base included
      ].sort(),
    );
  });

  test('GIVEN no point better than the base THEN the answer stays, and every point runs at it to name the best', async () => {
    const cache = fakeCache((key, size) => size >= (key === base ? 3 : 4));
    const [result] = await searchEngineGrid([{ policy, minInstances: 3, floor: 1, max: 8 }], grid, cache, 100);
    expect(result.minInstances).toBe(3);
    expect(cache.simulated.filter((s) => s.endsWith('@2'))).toHaveLength(4);
    expect(cache.simulated.filter((s) => s.endsWith('@3'))).toHaveLength(5);
  });

  test('GIVEN a strategy no size met with the base engine THEN the grid is tried at the largest size, and a point that meets there descends', async () => {
    const cache = fakeCache((key, size) => key === doubled && size >= 7);
    const [result] = await searchEngineGrid([{ policy, minInstances: null, floor: 1, max: 8 }], grid, cache, 100);
    expect(result.minInstances).toBe(7);
    expect(cache.simulated).toContain(`${doubled}@6`);
    // Only the point that met at 8 went lower; at the answer, 7, every point runs.
    expect(cache.simulated.filter((s) => s.endsWith('@6'))).toEqual([`${doubled}@6`]);
    expect(cache.simulated.filter((s) => s.endsWith('@7'))).toHaveLength(5);
  });

  test('GIVEN the answer at the smallest size THEN nothing runs below it', async () => {
    const cache = fakeCache(() => true);
    const [result] = await searchEngineGrid([{ policy, minInstances: 2, floor: 2, max: 8 }], grid, cache, 100);
    expect(result.minInstances).toBe(2);
    expect(cache.simulated.every((s) => s.endsWith('@2'))).toBe(true);
  });

  test('GIVEN a run budget too small for the next round THEN the search stops there and says so', async () => {
    const cache = fakeCache((key, size) => size >= (key === halved ? 1 : 5));
    // Four runs one size below fit; the next round (and the answer's every point) would pass the budget.
    const [result] = await searchEngineGrid([{ policy, minInstances: 5, floor: 1, max: 8 }], grid, cache, 4);
    expect(result).toEqual({ minInstances: 4, outOfBudget: true });
    expect(cache.runs).toBe(4);
  });
});

describe('when the plan picks the best run at one size', () => {
  const at = (margin: number, baseEngine: boolean) => ({ margin, baseEngine }) as SizedRun;

  test.each([
    // GIVEN the profile's run and a grid point's THEN the grid point wins only with 5 % more room, or when only it meets.
    [0.8, 0.76, 'profile'],
    [0.8, 0.7599, 'grid'],
    [1.0, 0.95, 'profile'],
    [1.01, 0.999, 'grid'],
    [1.2, 1.15, 'profile'],
    [1.2, 1.1399, 'grid'],
  ])('GIVEN margins %p (profile) and %p (grid point) THEN the %s run is chosen', (profile, grid, chosen) => {
    const runs = [at(profile, true), at(grid, false)];
    expect(bestPreferringProfileEngine(runs)).toBe(runs[chosen === 'profile' ? 0 : 1]);
  });
});
