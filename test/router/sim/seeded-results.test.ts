import expected from './fixtures/seeded-results.json';
import { SEEDED_SCENARIOS, seededDigests } from './seeded-results';
import type * as SeededResults from './seeded-results';
import { compiledModule } from '../../compiled-dist';

/**
 * Pins the simulator's results on seeded workloads to digests recorded before issue 14 made its data
 * structures compact and its loop cheaper: those changes must not move a single request by a nanosecond.
 * If a deliberate behaviour change moves them, re-record with `npx ts-node --transpile-only
 * test/router/sim/record-seeded-results.ts > test/router/sim/fixtures/seeded-results.json` and say why in the commit.
 */
describe('when seeded workloads are simulated', () => {
  test.each(SEEDED_SCENARIOS.map((s) => [s.name, s] as const))(
    'GIVEN %s THEN results and report equal the recorded ones',
    (name, scenario) => {
      const got = seededDigests(scenario);
      const want = (expected as Record<string, unknown>)[name];
      // THEN the scenario exercises eviction, and every digest matches
      expect(got.evictions).toBeGreaterThan(0);
      expect(got).toEqual(want);
    },
  );
});

describe('when prompts are prepared on a worker thread', () => {
  // From dist/: the worker thread then loads JavaScript instead of compiling the hashing modules under ts-node.
  const workerDigests = compiledModule<typeof SeededResults>('test/router/sim/seeded-results').seededDigests;
  // The scenarios whose workloads repeat shared heads, so the worker's hash memo is exercised too.
  const withHeads = SEEDED_SCENARIOS.filter((s) => s.workload.startsWith('long-context'));

  test('GIVEN the seeded scenarios with shared heads THEN results and report equal the recorded ones', () => {
    expect(withHeads.length).toBeGreaterThanOrEqual(2);
    for (const scenario of withHeads) {
      expect({ name: scenario.name, ...workerDigests(scenario, { promptWorker: true }) }).toEqual({
        name: scenario.name,
        ...(expected as Record<string, object>)[scenario.name],
      });
    }
  }, 60_000);
});
