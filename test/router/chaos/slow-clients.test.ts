import { runSlowClients } from '../../../router/bench/chaos/slow-clients';

describe('when slow clients trickle headers or bodies (npm test: 60 of them; npm run test:chaos: 500)', () => {
  it('GIVEN normal traffic alongside THEN each slow client is cut off with 408 request_timeout and every normal request succeeds', async () => {
    const r = await runSlowClients({
      slowClients: 60,
      rate: 40,
      phaseMs: 1500,
      headersTimeoutMs: 600,
      bodyTimeoutMs: 600,
      slackMs: 8000,
    });
    expect(r.violations).toEqual([]);
    expect(r.cutOff).toEqual({ 'headers: 408 request_timeout': 30, 'body: 408 request_timeout': 30 });
    expect(r.normal.with.n).toBeGreaterThan(0);
  }, 60_000);
});
