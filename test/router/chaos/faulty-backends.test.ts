import { runErrorStatuses, runGrayFailure, runNeverAnswers } from '../../../router/bench/chaos/faulty-backends';

describe('when a backend fails without dying (the policies in docs/reliability.md)', () => {
  it('GIVEN a backend that accepts and never answers THEN each request ends with 504 upstream_timeout and its slot is released', async () => {
    const r = await runNeverAnswers({ requests: 20, upstreamHeadersTimeoutMs: 300 });
    expect(r.violations).toEqual([]);
    expect(r.figures.outcomes).toEqual({ 'http_error:upstream_timeout': 20 });
  }, 30_000);

  it('GIVEN a slow backend that passes health checks THEN it stays admitted, is avoided through the concurrency threshold, and gets its keys back once fast', async () => {
    const r = await runGrayFailure({ durationMs: 1500, concurrency: 8, slowMs: 150, concurrencyThreshold: 3 });
    expect(r.violations).toEqual([]);
    expect(r.figures.maxInFlightOnSlow).toBeLessThanOrEqual(3);
  }, 30_000);

  it('GIVEN backends answering 429, 500 and 503 THEN the status passes through once, is never retried elsewhere, and is 424 ModelError on the runtime API', async () => {
    const r = await runErrorStatuses({ requestsPerStatus: 40 });
    expect(r.violations).toEqual([]);
    for (const status of ['429', '500', '503'])
      expect(r.figures[status]).toMatchObject({ retried: 0, runtimeApi: '424 model_error' });
  }, 30_000);
});
