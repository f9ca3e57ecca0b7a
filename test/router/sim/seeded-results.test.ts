import expected from './fixtures/seeded-results.json';
import { SEEDED_SCENARIOS, seededDigests } from './seeded-results';

/**
 * Pins the simulator's results on seeded workloads to digests recorded before issue 14 made its data
 * structures compact and its loop cheaper: those changes must not move a single request by a nanosecond.
 * If a deliberate behaviour change moves them, re-record with `npx ts-node --transpile-only
 * test/router/sim/record-seeded-results.ts > test/router/sim/fixtures/seeded-results.json` and say why in the commit.
 */
describe('when seeded workloads are simulated', () => {
  test.each(SEEDED_SCENARIOS.map((s) => [s.name, s] as const))('GIVEN %s THEN results and report equal the recorded ones', (name, scenario) => {
    const got = seededDigests(scenario);
    const want = (expected as Record<string, unknown>)[name];
    // THEN the scenario exercises eviction, and every digest matches
    expect(got.evictions).toBeGreaterThan(0);
    expect(got).toEqual(want);
  });
});
