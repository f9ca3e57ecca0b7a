import { buildLiveReport, runLiveBenchmark } from '../../../router/src/benchmark';
import { startEmulator, type RunningEmulator } from '../../../router/src/emulator';
import { renderMarkdown } from '../../../router/src/report';
import { terminalSummary } from '../../../router/src/report/terminal-summary';
import { parseWorkloadSpec } from '../../../router/src/workload';

/**
 * Requests the engine refuses as vLLM does (HTTP 400) are counted as errors by code, and the run goes on.
 * The tiny profile's context is 1,024 tokens: suffixes of 20–2,000 tokens make some prompts too long, which the
 * emulator refuses already; `max_tokens` over what is left is refused once the engine model does that too
 * (issue 12); this test holds in both cases, since it counts whatever 400s come back.
 */
describe('when the server refuses some requests with a 400', () => {
  let emulator: RunningEmulator;
  beforeAll(async () => {
    emulator = await startEmulator({ profile: 'tiny', timeScale: 50 });
  });
  afterAll(async () => {
    await emulator.close();
  });

  it('GIVEN prompts over the context among good ones THEN those count as http_400 errors, the others succeed, and the report lists errors by code', async () => {
    const workload = parseWorkloadSpec(
      'long-context?groups=3&prefixTokens=100&suffixTokens=20..2000&outputTokens=4&count=30&concurrency=3&seed=5',
    );
    const tooLong = Array.from(workload.requests()).filter(
      (r) => r.kind === 'chat' && r.messages.reduce((n, m) => n + m.content.length, 0) / 4 >= 1000,
    ).length;
    expect(tooLong).toBeGreaterThan(0);
    expect(tooLong).toBeLessThan(30);
    const result = await runLiveBenchmark({ url: emulator.url, workload, timeScale: 50 });
    expect(result.sent).toBe(30);
    expect(result.failed).toBeGreaterThanOrEqual(tooLong);
    expect(result.failed).toBeLessThan(30);
    const failed = result.records.filter((r) => r.error !== undefined);
    for (const r of failed) expect(r.error).toMatch(/^http_400/);
    expect(failed.some((r) => /maximum context length/.test(r.errorDetail ?? ''))).toBe(true);

    const report = buildLiveReport({ result, workload, strategy: { name: 'live' } });
    const codes = report.strategies[0].errorsByCode;
    expect(Object.keys(codes).every((c) => c.startsWith('http_400'))).toBe(true);
    expect(Object.values(codes).reduce((a, b) => a + b, 0)).toBe(result.failed);
    expect(renderMarkdown(report)).toMatch(/## Errors\n\n- live: http_400\S* × \d+/);
    expect(terminalSummary(report)).toMatch(/errors of live: http_400\S* × \d+/);
  });
});
