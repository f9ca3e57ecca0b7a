import { runKillBackend } from '../../../router/bench/chaos/kill-backend';

describe('when one of four backends dies under load (npm test size: 4 s; npm run test:chaos: 60 s at 200 req/s)', () => {
  it('GIVEN mixed streaming load THEN every request has one final outcome, failures stay within the victim’s in-flight requests, and it is ejected and re-admitted', async () => {
    const r = await runKillBackend({
      rate: 100,
      durationMs: 4000,
      downMs: 1500,
      seed: 3,
      maxEjectMs: 8000,
      maxReadmitMs: 15000,
    });
    expect({ violations: r.violations, outcomes: r.outcomes }).toEqual({ violations: [], outcomes: expect.anything() });
    expect(r.requests).toBeGreaterThan(100);
    expect(r.outcomes.cut ?? 0).toBe(0);
    expect(r.clientVisibleFailures).toBeLessThanOrEqual(r.inFlightOnVictimAtKill);
    expect(r.ejectedAfterMs).toBeDefined();
    expect(r.readmittedAfterMs).toBeDefined();
  }, 60_000);
});
