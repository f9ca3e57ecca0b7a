import { runSdkBench } from '../../../router/bench/sdk-transport-overhead';

/** Smoke version of `npm run bench:sdk`: one round of each transport, a few requests; checks shape, not speed. */
describe('when the SDK-versus-HTTP transport benchmark runs one small round', () => {
  it('GIVEN 10 requests per transport THEN both rounds succeed and the table names both paths', async () => {
    const { rounds, markdown } = await runSdkBench({ rounds: 1, requests: 10, concurrency: 2 });
    expect(rounds.map((r) => r.transport)).toEqual(['http', 'sdk']);
    for (const r of rounds) {
      expect(r.failed).toBe(0);
      expect(r.ttftP50).toBeGreaterThan(0);
      expect(r.ttftP50).toBeLessThanOrEqual(r.e2eP50);
    }
    expect(markdown).toContain('| 1 | AWS SDK (bench --sagemaker-endpoint) |');
    expect(markdown).toContain('Median SDK − HTTP over 1 round(s)');
  });
});
