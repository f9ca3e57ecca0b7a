import { builtinProfile } from '../../../router/src/emulator/engine-profile';
import type { PolicyConfig } from '../../../router/src/policy';
import { compareStrategies } from '../../../router/src/sim/compare-strategies';
import type * as ParallelRuns from '../../../router/src/sim/parallel-runs';
import { parseWorkloadSpec } from '../../../router/src/workload';
import { compiledModule } from '../../compiled-dist';

/** From dist/: its worker threads then load JavaScript instead of compiling the simulator under ts-node each. */
const { compareStrategiesInParallel } = compiledModule<typeof ParallelRuns>('router/src/sim/parallel-runs');

// Wall-clock measurements differ between any two runs; everything else must not.
const WALL_CLOCK_KEYS = new Set(['createdAt', 'simulation wall time (s)', 'decisionMicros']);
const withoutWallClock = (value: unknown) =>
  JSON.stringify(value, (key, v: unknown) => (WALL_CLOCK_KEYS.has(key) ? undefined : v));

describe('when strategies run on worker threads', () => {
  const policies: PolicyConfig[] = [
    { name: 'random' },
    { name: 'least-outstanding-requests' },
    { name: 'sagemaker-prefix-aware', prefixLength: 1024, concurrencyThreshold: 4 },
  ];
  const config = {
    workload: parseWorkloadSpec(
      'long-context?groups=8&prefixTokens=300&suffixTokens=20..100&outputTokens=4..24&rate=50&count=150&seed=4',
    ),
    policies,
    instances: 3,
    profile: builtinProfile('tiny'),
    seed: 5,
    warmupMs: 200,
    createdAt: '2026-01-01T00:00:00.000Z',
  };

  test('GIVEN 2 jobs for 3 strategies THEN the report equals the sequential one but for wall-clock figures, and callbacks fire per strategy', async () => {
    const sequential = compareStrategies(config);
    const started: number[] = [];
    const done: string[] = [];
    const parallel = await compareStrategiesInParallel(
      { ...config, onStrategyStart: (_p, i) => started.push(i), onStrategyDone: (p) => done.push(p.name) },
      { jobs: 2 },
    );
    expect(withoutWallClock(parallel.report)).toBe(withoutWallClock(sequential.report));
    expect(parallel.results.map((r) => r.records.map(({ decisionMicros: _d, ...rest }) => rest))).toEqual(
      sequential.results.map((r) => r.records.map(({ decisionMicros: _d, ...rest }) => rest)),
    );
    expect(started.sort()).toEqual([0, 1, 2]);
    expect(done.sort()).toEqual(['least-outstanding-requests', 'random', 'sagemaker-prefix-aware']);
  });

  test.each([0, 257, 1.5])('GIVEN jobs = %p THEN it refuses, naming the range', async (jobs) => {
    await expect(compareStrategiesInParallel(config, { jobs })).rejects.toThrow(
      `jobs must be an integer between 1 and 256 (got ${jobs})`,
    );
  });

  test("GIVEN a workload a worker cannot rebuild THEN the comparison fails with the worker's error", async () => {
    const broken = { ...config.workload, spec: 'long-context?groups=0' };
    await expect(
      compareStrategiesInParallel({ ...config, workload: broken, policies: [{ name: 'random' }] }, { jobs: 2 }),
    ).rejects.toThrow(/groups must be an integer/);
  });
});
