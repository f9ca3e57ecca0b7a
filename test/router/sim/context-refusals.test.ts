import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runPlanCommand } from '../../../router/src/cli/plan-command';
import { runSimulateCommand } from '../../../router/src/cli/simulate-command';
import { contextLimitRefusal } from '../../../router/src/emulator/engine-model';
import { builtinProfile } from '../../../router/src/emulator/engine-profile';
import { contextRefusalLine, countContextRefusals } from '../../../router/src/sim/context-refusals';
import { parseWorkloadSpec } from '../../../router/src/workload';

describe('when a prompt meets the context limit (the engine model refuses it, and the pre-run count says so)', () => {
  test.each([
    // GIVEN prompt tokens and max_tokens on a 1,024-token context THEN the engine's verdict.
    [1023, undefined, undefined],
    [1024, undefined, 'prompt-too-long'],
    [1023, 1, undefined],
    [1023, 2, 'max-tokens-too-large'],
    [1000, 24, undefined],
    [1000, 25, 'max-tokens-too-large'],
    // An invalid max_tokens is refused for that, by the engine's own check, not as too large.
    [1000, 0, undefined],
    [1000, 30.5, undefined],
  ])('GIVEN %p prompt tokens and max_tokens %p THEN the refusal is %p', (prompt, maxTokens, code) => {
    expect(contextLimitRefusal(prompt, maxTokens, 1024)?.code).toBe(code);
  });
});

describe('when simulate counts the prompts the context refuses before the run', () => {
  const workload = parseWorkloadSpec('trace:mooncake-synthetic?count=200');

  test('GIVEN a mixed fleet THEN each context counts its own refusals, shortest first', () => {
    const long = builtinProfile('p5-llama-3.1-70b');
    const short = { ...long, name: 'short', maxModelLen: 16_384 };
    const counted = countContextRefusals(workload, [long, short, long]);
    expect(counted.prompts).toBe(200);
    expect(counted.upperBound).toBe(false);
    expect(counted.byContext.map((c) => [c.maxModelLen, c.profiles])).toEqual([
      [16_384, ['short']],
      [131_072, ['p5-llama-3.1-70b']],
    ]);
    expect(counted.byContext[0].refused).toBeGreaterThan(counted.byContext[1].refused);
    expect(contextRefusalLine(counted)).toMatch(
      /^context: of 200 prompts, \d+ do not fit the 16,384-token context of short; 0 do not fit the 131,072-token context of p5-llama-3.1-70b: a prompt is refused/,
    );
  });

  test('GIVEN --max-requests and --duration THEN only the prompts the run sends are counted', () => {
    const p5 = builtinProfile('p5-llama-3.1-70b');
    expect(countContextRefusals(workload, [p5], { maxRequests: 50 }).prompts).toBe(50);
    const firstSecond = [...workload.requests()].filter((r) => r.arrivalMs < 1000).length;
    expect(countContextRefusals(workload, [p5], { sendUntilMs: 1000 }).prompts).toBe(firstSecond);
  });

  function smallContextProfile(): { dir: string; profileFile: string } {
    const dir = mkdtempSync(join(tmpdir(), 'context-refusals-'));
    const profileFile = join(dir, 'p5-16k.json');
    writeFileSync(
      profileFile,
      JSON.stringify({ ...builtinProfile('p5-llama-3.1-70b'), name: 'p5-16k', maxModelLen: 16_384 }),
    );
    return { dir, profileFile };
  }

  test('GIVEN the shipped trace on a 16k-context profile WHEN planned THEN plan says the count before the run, and its error rate is that count', async () => {
    const { dir, profileFile } = smallContextProfile();
    const written: string[] = [];
    const { report } = await runPlanCommand(
      {
        workload: 'trace:mooncake-synthetic?count=40',
        profile: profileFile,
        slo: ['p90-ttft<=2s'],
        instances: '2..2',
        policy: ['random'],
        window: '0',
        jobs: '1',
        out: join(dir, 'plan'),
      },
      () => undefined,
      { write: (text: string) => written.push(text) },
    );
    const said = /^context: of 40 prompts, (\d+) do not fit the 16,384-token context of p5-16k/.exec(written[0]);
    expect(said).not.toBeNull();
    expect(Number(said![1])).toBeGreaterThan(0);
    const run = report.strategies[0].atMin ?? report.strategies[0].bestAtLargest;
    expect(run!.errorRate).toBeCloseTo(Number(said![1]) / 40, 12);
  }, 60_000);

  test('GIVEN the shipped trace on a 16k-context profile WHEN simulated THEN the count said before the run is every strategy’s errors, in its report and its progress line', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'context-refusals-'));
    const profileFile = join(dir, 'p5-16k.json');
    writeFileSync(
      profileFile,
      JSON.stringify({ ...builtinProfile('p5-llama-3.1-70b'), name: 'p5-16k', maxModelLen: 16_384 }),
    );
    const progress: string[] = [];
    const { files } = await runSimulateCommand(
      {
        workload: 'trace:mooncake-synthetic?count=200',
        profile: profileFile,
        instances: '4',
        policy: ['random', 'cache-aware'],
        jobs: '1',
        out: join(dir, 'report'),
      },
      () => undefined,
      (line) => progress.push(line),
    );
    const said =
      /^context: of 200 prompts, (\d+) do not fit the 16,384-token context of p5-16k: those are refused/.exec(
        progress[0],
      );
    expect(said).not.toBeNull();
    const refused = Number(said![1]);
    // Both of the engine's rules are met on this trace: prompts over the context, and prompt + max_tokens over it.
    expect(refused).toBeGreaterThan(70);
    const report = JSON.parse(readFileSync(files.json, 'utf8')) as {
      strategies: { errors: number; errorsByCode: Record<string, number> }[];
    };
    for (const strategy of report.strategies) expect(strategy.errors).toBe(refused);
    expect(progress.filter((l) => l.includes(`requests (${refused} failed)`))).toHaveLength(2);
  }, 60_000);
});
