import { runSoak } from '../../../router/bench/chaos/soak';

describe('when the router runs at a steady rate (npm test: 4 s; npm run test:chaos: 10 minutes; .ci/run: 1 minute)', () => {
  it('GIVEN steady mixed load THEN every request succeeds and RSS, heap and open sockets are flat within the bounds', async () => {
    const r = await runSoak({
      rate: 100,
      durationMs: 4000,
      warmupMs: 1000,
      settleMs: 1000,
      maxGrowthBytes: 64 * 1024 * 1024,
      maxExtraSockets: 16,
    });
    expect(r.violations).toEqual([]);
    expect(r.outcomes).toEqual({ ok: r.requests });
    expect(r.start.rssBytes).toBeGreaterThan(0);
    expect(r.end.tcpHandles).toBeGreaterThan(0);
  }, 60_000);
});
