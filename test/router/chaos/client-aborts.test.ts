import { runClientAborts } from '../../../router/bench/chaos/client-aborts';

describe('when clients abort at random points (npm test size; npm run test:chaos sends 10,000)', () => {
  it('GIVEN a third of 300 requests cut while uploading, before headers or mid-stream THEN every load counter returns to 0 and every abort reached its backend as a closed connection', async () => {
    const r = await runClientAborts({ requests: 300, concurrency: 16, seed: 7 });
    expect(r.violations).toEqual([]);
    expect(Object.values(r.countersAfter).every((v) => v === 0)).toBe(true);
    expect(Object.keys(r.countersAfter).length).toBeGreaterThanOrEqual(4);
    // Each plan happened, and aborts after the body was sent reached the backends (so the check above had work to do).
    expect(Math.min(...Object.values(r.aborted))).toBeGreaterThan(5);
    expect(r.abortsSeenByBackends).toBeGreaterThanOrEqual(r.aborted['mid-stream']);
    expect(r.closedAtBackends).toBe(r.abortsSeenByBackends);
    expect(r.outcomes.ok + r.outcomes.aborted).toBe(300);
  }, 60_000);

  it('GIVEN the cache-aware policy, which tracks queued prefill and decoding load per instance THEN that load is back to exactly 0 too', async () => {
    const r = await runClientAborts({
      requests: 200,
      concurrency: 16,
      seed: 8,
      policy: { name: 'cache-aware', blockChars: 64 },
    });
    expect(r.violations).toEqual([]);
    expect(Object.keys(r.countersAfter).some((k) => k.includes('queuedPrefillTokens'))).toBe(true);
    expect(Object.keys(r.countersAfter).some((k) => k.includes('prefix_router_decode_sequences'))).toBe(true);
  }, 60_000);
});
