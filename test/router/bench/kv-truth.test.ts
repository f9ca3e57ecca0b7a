import {
  KV_TRUTH_END,
  KV_TRUTH_START,
  kvTruthRuns,
  kvTruthScenarios,
  parseKvTruthArgs,
  runKvTruthBench,
} from '../../../router/bench/kv-truth';
import { MEASURED_STEP_JITTER_CV } from '../../../router/src/emulator/step-jitter';

describe('when bench:kv-truth parses its flags', () => {
  test.each([
    [[], { quick: false, seeds: 1, jitterStreams: 0 }],
    [['--quick'], { quick: true, seeds: 1, jitterStreams: 0 }],
    [['--seeds', '1'], { quick: false, seeds: 1, jitterStreams: 0 }],
    [['--quick', '--seeds', '20'], { quick: true, seeds: 20, jitterStreams: 0 }],
    [['--jitter-streams', '0'], { quick: false, seeds: 1, jitterStreams: 0 }],
    [['--jitter-streams', '10', '--seeds', '2'], { quick: false, seeds: 2, jitterStreams: 10 }],
  ])('GIVEN %j THEN it reads %j', (argv, expected) => {
    expect(parseKvTruthArgs(argv)).toEqual(expected);
  });

  test.each([['0'], ['21'], ['2.5'], [undefined]])('GIVEN --seeds %s THEN it is refused naming the range', (raw) => {
    const argv = raw === undefined ? ['--seeds'] : ['--seeds', raw];
    expect(() => parseKvTruthArgs(argv)).toThrow(
      `--seeds must be an integer between 1 and 20 (got ${JSON.stringify(raw ?? '')})`,
    );
  });

  test.each([['-1'], ['11'], ['1.5'], [undefined]])(
    'GIVEN --jitter-streams %s THEN it is refused naming the range',
    (raw) => {
      const argv = raw === undefined ? ['--jitter-streams'] : ['--jitter-streams', raw];
      expect(() => parseKvTruthArgs(argv)).toThrow(
        `--jitter-streams must be an integer between 0 and 10 (got ${JSON.stringify(raw ?? '')})`,
      );
    },
  );

  test('GIVEN 2 seeds and 3 jitter streams THEN six runs, seed by seed, jittered at the measured CV', () => {
    const runs = kvTruthRuns({ quick: true, seeds: 2, jitterStreams: 3 });
    expect(runs.map((r) => [r[0].settings.seed, r[0].settings.stepJitterStream])).toEqual([
      [1, 1],
      [1, 2],
      [1, 3],
      [2, 1],
      [2, 2],
      [2, 3],
    ]);
    expect(runs.flat().every((s) => s.settings.stepJitterCv === MEASURED_STEP_JITTER_CV)).toBe(true);
    const plain = kvTruthRuns({ quick: true, seeds: 1, jitterStreams: 0 });
    expect(plain).toHaveLength(1);
    expect(plain[0].every((s) => s.settings.stepJitterCv === undefined)).toBe(true);
    expect(plain[0].map((s) => s.key)).toEqual(['restart', 'kv-pressure', 'kv-pressure-shared', 'bypass', 'replicas']);
    const shared = plain[0].find((s) => s.key === 'kv-pressure-shared')!.settings;
    expect([shared.routers, shared.bypassShare, shared.profile.kvCapacityBlocks]).toEqual([2, 0.3, 20_000]);
  });

  test('GIVEN --scenarios THEN only those run, in the bench order', () => {
    const args = parseKvTruthArgs(['--scenarios', 'bypass,kv-pressure-shared', '--quick']);
    expect(args).toEqual({ quick: true, seeds: 1, jitterStreams: 0, scenarios: ['bypass', 'kv-pressure-shared'] });
    expect(kvTruthRuns(args)[0].map((s) => s.key)).toEqual(['kv-pressure-shared', 'bypass']);
  });

  test.each([['kv-pressure,restrt'], [''], [undefined]])(
    'GIVEN --scenarios %p THEN it is refused listing the keys',
    (raw) => {
      const argv = raw === undefined ? ['--scenarios'] : ['--scenarios', raw];
      expect(() => parseKvTruthArgs(argv)).toThrow(
        `--scenarios takes a comma-separated list of restart, kv-pressure, kv-pressure-shared, bypass, replicas (got ${JSON.stringify(raw ?? '')})`,
      );
    },
  );

  test('GIVEN an unknown flag THEN the usage names it', () => {
    expect(() => parseKvTruthArgs(['--seed', '2'])).toThrow(/unknown flag "--seed"/);
  });
});

describe('when bench:kv-truth runs at two seeds, one jittered (smoke size)', () => {
  test('GIVEN two runs THEN the section has the first run tables, a ratio per events row and run, and no verdict yet', async () => {
    const runs = [kvTruthScenarios(3, 1), kvTruthScenarios(3, 2, 1)].map((r) => r.filter((s) => s.key === 'restart'));
    expect(runs[1][0].spec).toContain('seed=2');
    expect(runs[1][0].settings.seed).toBe(2);
    const section = await runKvTruthBench(runs, 'test');
    expect(section.startsWith(KV_TRUTH_START) && section.endsWith(KV_TRUTH_END)).toBe(true);
    expect(section).toContain(
      "2 runs: seed 1; seed 2, jitter 1 (the workload's and the run's seed; the scenario tables are the first run's)",
    );
    expect(section).toContain('measured CV 0.2 % (section 4)');
    expect(section).toContain("### P90 ÷ the estimate's in every run (2 runs)");
    expect(section).toContain('| strategy | seed 1 | seed 2, jitter 1 | geometric mean | verdict |');
    const ratioRows = section
      .split('\n')
      .filter((l) => /^\| cache-aware \+ events[^|]*(\| [\d.]+× ){3}\| \*\*too few runs\*\* \(2; [^|]*\|$/.test(l));
    expect(ratioRows).toHaveLength(4);
    expect(section).toContain('over all runs): **not judged** (too few runs).');
  });
});
