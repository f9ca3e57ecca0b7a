import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';
import { blindReplicaNote, parseSimulateFlags, runSimulateCommand } from '../../../router/src/cli/simulate-command';
import type * as SimulateCommand from '../../../router/src/cli/simulate-command';
import { parsePolicySpec, formatPolicySpec } from '../../../router/src/policy/policy-spec';
import { compiledModule } from '../../compiled-dist';

const small = 'long-context?groups=4&prefixTokens=300&suffixTokens=20..40&outputTokens=4&rate=40&count=40';

describe('prefix-router simulate', () => {
  test('GIVEN a small workload WHEN run THEN it writes one report with every strategy and prints the table', async () => {
    const out = mkdtempSync(join(tmpdir(), 'simulate-'));
    const lines: string[] = [];
    // The default --jobs: worker threads, so from dist/ (from the sources each would compile the simulator under ts-node).
    const { comparison, files } = await compiledModule<typeof SimulateCommand>(
      'router/src/cli/simulate-command',
    ).runSimulateCommand(
      {
        workload: small,
        instances: '3',
        profile: 'tiny',
        out,
        policy: ['random', 'sagemaker-prefix-aware?prefixLength=1024'],
      },
      (l) => lines.push(l),
      () => undefined,
    );
    // A tuned policy keeps its options in the label, even when it is the only one of its name.
    expect(comparison.report.strategies.map((s) => s.label)).toEqual([
      'random',
      'sagemaker-prefix-aware (prefixLength=1024)',
    ]);
    expect(comparison.report.baseline).toBe('random');
    expect(JSON.parse(readFileSync(files.json, 'utf8')).strategies).toHaveLength(2);
    expect(readFileSync(files.html, 'utf8')).toContain('<svg');
    const printed = lines.join('\n');
    // The terminal gets the verdict and a compact table that fits 120 columns; the full tables are in report.md.
    expect(printed).toMatch(/^sagemaker-prefix-aware \(prefixLength=1024\)  +\S/m);
    expect(printed).not.toContain('| sagemaker-prefix-aware');
    for (const line of printed.split('\n').filter((l) => !/^(report:| {8}\/)/.test(l)))
      expect(line.length).toBeLessThanOrEqual(120);
    expect(readFileSync(files.markdown, 'utf8')).toMatch(/^## Verdict\n\n\*\*.+\*\*$/m);
  });

  test.each([
    [{ instances: '0' }, /--instances must be N or COUNT:PROFILE groups .*, 1–1024 instances in all \(got "0"\)/],
    [
      { instances: '1025' },
      /--instances must be N or COUNT:PROFILE groups .*, 1–1024 instances in all \(got "1025": 1025 instances\)/,
    ],
    [{ seed: '-1' }, /--seed must be an integer between 0 and 4294967295/],
    [{ duration: '0' }, /--duration must be a number greater than 0 and at most 604800/],
    [{ warmup: 'soon' }, /--warmup must be a number between 0 and 604800/],
    [{ 'max-requests': '0' }, /--max-requests must be an integer between 1 and 100000000/],
    [{ policy: ['fastest'] }, /--policy must name a policy: one of sagemaker-prefix-aware/],
    [{ policy: ['random', 'random'] }, /--policy lists the same policy twice/],
    [
      { policy: ['sagemaker-prefix-aware?concurrencyThreshold=1025'] },
      /concurrencyThreshold must be an integer between 1 and 1024 \(got 1025\)/,
    ],
    [{ policy: ['random?prefixLength=2048'] }, /prefixLength is not an option of policy random/],
    [{ profile: 'no-such-profile' }, /--profile/],
    [{ workload: 'long-context?groups=0' }, /groups/],
    [{ jobs: '0' }, /--jobs must be an integer between 1 and 256 \(got "0"\)/],
    [{ jobs: '257' }, /--jobs must be an integer between 1 and 256 \(got "257"\)/],
    [
      { policy: ['random', 'cache-aware'], baseline: 'least-outstanding-requests' },
      /--baseline 'least-outstanding-requests' is not one of the runs \(random, cache-aware\)/,
    ],
    [
      { baseline: 'cache-aware' },
      /--baseline 'cache-aware' is not one of the runs \(random, least-outstanding-requests, sagemaker-prefix-aware\)/,
    ],
  ])('GIVEN %p WHEN parsed THEN it fails naming the flag and the range', (flags, message) => {
    expect(() => parseSimulateFlags({ workload: small, ...flags })).toThrow(message);
  });

  test.each([
    ['a policy name', 'sagemaker-prefix-aware'],
    ['a label with options', 'sagemaker-prefix-aware (prefixLength=1024)'],
    ['the default random', 'random'],
  ])('GIVEN --baseline naming %s THEN it is accepted', (_what, baseline) => {
    expect(
      parseSimulateFlags({ workload: small, policy: ['random', 'sagemaker-prefix-aware?prefixLength=1024'], baseline })
        .baseline,
    ).toBe(baseline);
  });

  test('GIVEN a long simulation and a --baseline naming no strategy WHEN run THEN it fails before simulating anything and writes no report', async () => {
    const out = join(mkdtempSync(join(tmpdir(), 'simulate-')), 'report');
    const lines: string[] = [];
    const run = runSimulateCommand(
      {
        workload: 'long-context?rate=40&count=10000000',
        policy: ['random', 'cache-aware'],
        baseline: 'cache-awre',
        out,
      },
      (l) => lines.push(l),
      (l) => lines.push(l),
    );
    await expect(run).rejects.toThrow("--baseline 'cache-awre' is not one of the runs (random, cache-aware)");
    expect(lines).toEqual([]);
    expect(existsSync(out)).toBe(false);
  });

  test('GIVEN --profile h200-llama-3.1-8b WHEN run THEN the simulated instances use that profile', async () => {
    const flags = {
      workload: small,
      instances: '2',
      profile: 'h200-llama-3.1-8b',
      out: mkdtempSync(join(tmpdir(), 'simulate-')),
      policy: ['random'],
    };
    expect(parseSimulateFlags(flags).profile.name).toBe('h200-llama-3.1-8b');
    const { comparison } = await runSimulateCommand(
      flags,
      () => undefined,
      () => undefined,
    );
    expect(comparison.report.strategies[0].label).toBe('random');
    expect(comparison.report.environment).toMatchObject({
      profile: 'h200-llama-3.1-8b',
      'KV capacity per instance (tokens)': 816000,
    });
  });

  test.each([
    ['1', 1],
    ['256', 256],
  ])('GIVEN --jobs %s WHEN parsed THEN %i workers', (jobs, want) => {
    expect(parseSimulateFlags({ workload: small, jobs }).jobs).toBe(want);
  });

  test('GIVEN no --jobs WHEN parsed THEN one worker per core', () => {
    expect(parseSimulateFlags({ workload: small }).jobs).toBe(Math.min(256, availableParallelism()));
  });

  test('GIVEN --sweep (the docs command) THEN every combination runs as its own strategy, with --policy added', async () => {
    const out = mkdtempSync(join(tmpdir(), 'simulate-'));
    const { comparison } = await runSimulateCommand(
      // docs/workloads.md's command, on the first 30 requests of the shipped trace, in this thread (a worker thread
      // under ts-jest compiles the simulator again, seconds of CPU; the first test here runs the default --jobs).
      {
        workload: 'trace:router/traces/mooncake-synthetic.jsonl?count=30',
        jobs: '1',
        out,
        quiet: true,
        policy: ['cache-aware'],
        sweep: ['sagemaker-prefix-aware?prefixLength=1024,4096&concurrencyThreshold=8,32'],
      },
      () => undefined,
      () => undefined,
    );
    expect(comparison.report.strategies.map((s) => s.label)).toEqual([
      'cache-aware',
      'sagemaker-prefix-aware (prefixLength=1024, concurrencyThreshold=8)',
      'sagemaker-prefix-aware (prefixLength=1024, concurrencyThreshold=32)',
      'sagemaker-prefix-aware (prefixLength=4096, concurrencyThreshold=8)',
      'sagemaker-prefix-aware (prefixLength=4096, concurrencyThreshold=32)',
    ]);
    expect(comparison.report.strategies[0].decisionReasons).not.toEqual({});
  });

  test.each([
    [{ routers: '4', policy: ['cache-aware'] }, true],
    [{ routers: '4', policy: ['random', 'cache-aware?coldPlacement=least-loaded'] }, true],
    [{ routers: '4', policy: ['cache-aware?coldPlacement=rendezvous'] }, false],
    [{ routers: '4', observeMs: '10', policy: ['cache-aware'] }, false],
    [{ routers: '1', policy: ['cache-aware'] }, false],
    [{ routers: '4', policy: ['llm-d'] }, false],
  ])('GIVEN %j THEN the note on replicas placing cold prompts by load is printed: %s', (flags, printed) => {
    const note = blindReplicaNote(parseSimulateFlags({ workload: small, ...flags }));
    if (printed) expect(note).toMatch(/cache-aware\?coldPlacement=rendezvous/);
    else expect(note).toBeUndefined();
  });

  test('GIVEN --routers 4 THEN the report names the replicas', async () => {
    const out = mkdtempSync(join(tmpdir(), 'simulate-'));
    const { comparison } = await runSimulateCommand(
      { workload: small, instances: '3', profile: 'tiny', out, quiet: true, policy: ['cache-aware'], routers: '4' },
      () => undefined,
      () => undefined,
    );
    expect(comparison.report.environment['router replicas (round-robin, no shared state)']).toBe(4);
    expect(comparison.report.strategies[0].requests).toBe(40);
  });

  test.each([
    [{ routers: '0' }, /--routers must be an integer between 1 and 64/],
    [{ routers: '65' }, /--routers must be an integer between 1 and 64/],
    [
      { sweep: ['sagemaker-prefix-aware?prefixLength=512,1024'] },
      /--sweep sagemaker-prefix-aware option prefixLength must be an integer between 1024 and 65536 \(got 512\)/,
    ],
    [{ sweep: ['fastest?x=1,2'] }, /--sweep must name a policy/],
  ])('GIVEN %p THEN it fails naming the flag and the range', (flags, message) => {
    expect(() => parseSimulateFlags({ workload: small, ...flags })).toThrow(message);
  });

  test('policy specs round-trip', () => {
    const config = parsePolicySpec('sagemaker-prefix-aware?prefixLength=2048&concurrencyThreshold=8');
    expect(config).toEqual({ name: 'sagemaker-prefix-aware', prefixLength: 2048, concurrencyThreshold: 8 });
    expect(parsePolicySpec(formatPolicySpec(config))).toEqual(config);
  });
});
