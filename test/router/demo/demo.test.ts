import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseDemoFlags } from '../../../router/src/cli/demo-command';
import type * as DemoCommand from '../../../router/src/cli/demo-command';
import { demoSummary } from '../../../router/src/demo/run-demo';
import { builtinProfile, fleetText } from '../../../router/src/emulator/engine-profile';
import { writeFileSync } from 'node:fs';
import { compiledModule } from '../../compiled-dist';

/**
 * The live demos run from dist/: the demo forks an emulator fleet and a router per strategy from its own file, and
 * from the sources each fork would compile the router again under ts-node (seconds of CPU each, minutes under load).
 */
const runDemoCommand: typeof DemoCommand.runDemoCommand = (...args) =>
  compiledModule<typeof DemoCommand>('router/src/cli/demo-command').runDemoCommand(...args);

describe('prefix-router demo', () => {
  test('GIVEN a small setup WHEN the demo runs THEN every strategy ran live through the router and one report compares them', async () => {
    const out = mkdtempSync(join(tmpdir(), 'demo-'));
    const lines: string[] = [];
    const { report, files } = await runDemoCommand(
      {
        instances: '2',
        duration: '10',
        // 2 s of wall time per strategy: enough requests even when other suites load the machine's two cores.
        timeScale: '5',
        profile: 'tiny',
        workload: 'long-context?groups=4&prefixTokens=300&suffixTokens=10..40&outputTokens=4&count=400&concurrency=4',
        policy: ['random', 'sagemaker-prefix-aware?prefixLength=1024'],
        out,
        progress: false,
      },
      (l) => lines.push(l),
    );
    expect(report.mode).toBe('live');
    expect(report.strategies.map((s) => s.label)).toEqual(['random', 'sagemaker-prefix-aware (prefixLength=1024)']); // a tuned policy keeps its options
    for (const s of report.strategies) {
      expect(s.requests).toBeGreaterThan(10);
      expect(s.errors).toBe(0);
      // Instances are named by position so both strategies show the same two slots.
      expect(s.instances.map((i) => i.id).sort()).toEqual(['instance-0', 'instance-1']);
      expect(s.cacheHitRate.engineReported).not.toBeNull();
      expect(s.cacheHitRate.prometheus).not.toBeNull();
    }
    // Affinity keeps each group on one instance, so it hits the cache more than random.
    const [random, affinity] = report.strategies;
    expect(affinity.cacheHitRate.engineReported!).toBeGreaterThan(random.cacheHitRate.engineReported!);
    for (const f of [files.html, files.markdown, files.json]) expect(existsSync(f)).toBe(true);
    expect(JSON.parse(readFileSync(files.json, 'utf8')).baseline).toBe('random');
    const printed = lines.join('\n');
    expect(printed).toContain(demoSummary(report));
    expect(printed).toContain(files.html);
  });

  test.each([
    [
      { instances: '1' },
      /--instances must be N or COUNT:PROFILE groups .*, 2–16 instances in all \(got "1": 1 instances\)/,
    ],
    [{ instances: '17' }, /--instances must be N or COUNT:PROFILE groups .*, 2–16 instances in all/],
    [{ instances: '1:p5-llama-3.1-70b' }, /--instances must be N or COUNT:PROFILE groups .*: 1 instances/],
    [{ instances: '3:p5-llama-3.1-70b,1:p9' }, /--instances: unknown profile "p9"/],
    [{ duration: '9' }, /--duration must be a number between 10 and 3600/],
    [{ duration: '3601' }, /--duration must be a number between 10 and 3600/],
    [{ timeScale: '0.5' }, /--time-scale must be a number between 1 and 20/],
    [{ timeScale: '21' }, /--time-scale must be a number between 1 and 20/],
    [{ policy: ['random', 'random'] }, /--policy lists the same policy twice/],
    [{ profile: 'h100-imaginary' }, /--profile/],
  ])('GIVEN %p WHEN parsed THEN it fails naming the flag and the range', (flags, message) => {
    expect(() => parseDemoFlags(flags)).toThrow(message);
  });

  test('GIVEN no flags THEN the defaults are the documented demo: 4 instances, 4 strategies, long-context', () => {
    const options = parseDemoFlags({});
    expect(options.instances).toBe(4);
    expect(options.policies.map((p) => p.name)).toEqual([
      'random',
      'least-outstanding-requests',
      'sagemaker-prefix-aware',
      'cache-aware',
    ]);
    expect(options.workload.kind).toBe('long-context');
    expect(options.timeScale).toBe(2);
  });

  test('GIVEN --instances 3:p5-llama-3.1-70b,1:p4d-llama-3.1-70b THEN the demo runs that mixed fleet', () => {
    const options = parseDemoFlags({ instances: '3:p5-llama-3.1-70b,1:p4d-llama-3.1-70b' });
    expect(options.instances).toBe(4);
    expect(fleetText(options.profiles!)).toBe('3 × p5-llama-3.1-70b + 1 × p4d-llama-3.1-70b');
    // A fleet of one type is not "mixed": it runs as before.
    expect(parseDemoFlags({ instances: '4:p5-llama-3.1-70b' }).profiles).toBeUndefined();
  });

  test('GIVEN a mixed fleet WHEN the demo runs THEN each emulator runs its own profile behind one router and the report names the fleet', async () => {
    // tiny and a copy three times slower in every step-time coefficient (the same KV block size).
    const tiny = builtinProfile('tiny');
    const dir = mkdtempSync(join(tmpdir(), 'demo-mixed-'));
    const slow = join(dir, 'tiny-slow.json');
    writeFileSync(
      slow,
      JSON.stringify({
        ...tiny,
        name: 'tiny-slow',
        stepTime: Object.fromEntries(Object.entries(tiny.stepTime).map(([k, v]) => [k, v * 3])),
      }),
    );
    const { report } = await runDemoCommand(
      {
        instances: `1:tiny,1:${slow}`,
        duration: '10',
        timeScale: '5',
        workload: 'long-context?groups=4&prefixTokens=300&suffixTokens=10..40&outputTokens=4&count=400&concurrency=4',
        policy: ['cache-aware'],
        out: join(dir, 'report'),
        progress: false,
      },
      () => undefined,
    );
    expect(report.environment.fleet).toBe('1 × tiny + 1 × tiny-slow');
    expect(report.strategies[0].requests).toBeGreaterThan(10);
    expect(report.strategies[0].errors).toBe(0);
  });
});
