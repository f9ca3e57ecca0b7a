import { measurePromptPrep, parseArgs, runPromptPrep } from '../../../router/bench/prompt-prep-speed';

describe('when the prompt-preparation benchmark runs (smoke size)', () => {
  test('GIVEN two fleet sizes and two runs THEN each size is timed twice, interleaved, with its GC share', async () => {
    const { rows, markdown } = await runPromptPrep({ instances: [2, 3], from: 0.01, count: 30, repeat: 2 });
    expect(rows.map((r) => [r.run, r.instances])).toEqual([
      [1, 2],
      [1, 3],
      [2, 2],
      [2, 3],
    ]);
    for (const r of rows) {
      expect(r.requests).toBe(30);
      expect(r.microsPerRequest).toBeGreaterThan(0);
      expect(r.gcMicrosPerRequest).toBeGreaterThanOrEqual(0);
    }
    expect(markdown).toContain('| run | instances | requests timed | µs / request | of which GC (µs) |');
    expect(markdown).toMatch(/^\| 2 \| 3 \| 30 \| [\d.]+ \| [\d.]+ \|$/m);
  });

  test("GIVEN a start near the hour's end THEN fewer requests are timed, as many as are left", async () => {
    // One instance: 6/7 req/s for an hour, about 3,100 requests (a Poisson draw); from 99.9 % of the expected
    // count on, a few dozen at most are left, far fewer than the 1,000 asked for.
    const row = await measurePromptPrep(1, 0.999, 1000);
    expect(row.requests).toBeGreaterThan(0);
    expect(row.requests).toBeLessThan(200);
  });

  test('GIVEN the documented flags THEN they parse; bad ones are refused naming the flag', () => {
    expect(parseArgs(['--instances', '7,112', '--from', '0.5', '--count', '5000', '--repeat', '3'])).toEqual({
      instances: [7, 112],
      from: 0.5,
      count: 5000,
      repeat: 3,
    });
    expect(parseArgs([])).toEqual({ instances: [7, 112], from: 0.3, count: 20000, repeat: 2 });
    expect(() => parseArgs(['--count', '0'])).toThrow('--count must be an integer between 1 and 100000000 (got "0")');
    expect(() => parseArgs(['--from', '1'])).toThrow('--from must be a fraction in [0, 1) (got 1)');
    expect(() => parseArgs(['--fast', '1'])).toThrow(/unknown flag "--fast"/);
    expect(() => parseArgs(['--instances', '7,2000'])).toThrow(
      '--instances must list integers between 1 and 1024 (got 7,2000)',
    );
  });
});
