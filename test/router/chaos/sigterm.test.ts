import { runSigterm } from '../../../router/bench/chaos/sigterm';

describe('when prefix-router serve gets SIGTERM under load', () => {
  it('GIVEN streams in flight THEN they complete, new requests get 503 shutting_down with Retry-After, and it exits 0 within the grace period', async () => {
    const r = await runSigterm({ rate: 40, loadMs: 1500, shutdownGraceMs: 5000, slackMs: 5000 });
    expect(r.violations).toEqual([]);
    expect(r.exitCode).toBe(0);
    expect(r.inFlightAtSignal).toBeGreaterThan(0);
    expect(r.probesAfterSignal['http_error:shutting_down']).toBeGreaterThan(0);
  }, 60_000);
});
