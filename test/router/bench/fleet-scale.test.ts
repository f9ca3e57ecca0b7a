import { parseArgs, runFleetScale, scaledLongContext } from '../../../router/bench/fleet-scale';
import type * as FleetScale from '../../../router/bench/fleet-scale';
import { compiledModule } from '../../compiled-dist';

describe('when the fleet-scale benchmark runs (smoke size, in-process)', () => {
  test('GIVEN two small fleets THEN each row has requests, times and memory, and the table has the ratio column', () => {
    const { rows, markdown } = runFleetScale({
      instances: [2, 4],
      seconds: 4,
      policy: 'sagemaker-prefix-aware',
      inProcess: true,
    });
    // Too few requests for a worker to pay: auto keeps the prompts on this thread, and the table says which mode ran.
    expect(markdown).toContain('prompt worker auto');
    expect(rows.map((r) => r.instances)).toEqual([2, 4]);
    for (const r of rows) {
      expect(r.requests).toBeGreaterThan(0);
      expect(r.cpuMs).toBeGreaterThan(0);
      expect(r.maxRssMb).toBeGreaterThan(0);
    }
    // Twice the fleet, twice the arrival rate: about twice the requests.
    expect(rows[1].requests).toBeGreaterThan(rows[0].requests);
    expect(markdown).toContain('| 4 |');
    expect(markdown).toMatch(/load average at start/);
    expect(markdown).toContain('1.00×');
  });

  test("GIVEN --repeat 2 THEN every size runs twice, interleaved, and a table gives each size's medians and their ratio", () => {
    const { rows, markdown } = runFleetScale({
      instances: [2, 3],
      seconds: 2,
      policy: 'sagemaker-prefix-aware',
      inProcess: true,
      repeat: 2,
    });
    expect(rows.map((r) => r.instances)).toEqual([2, 3, 2, 3]);
    // The same seeded simulation twice: the same requests.
    expect(rows[2].requests).toBe(rows[0].requests);
    expect(markdown).toContain('2 interleaved runs of each size');
    expect(markdown).toMatch(/^\| 2 \| 3 \| /m);
    expect(markdown).toContain('wall / request, median (min–max) (ms)');
    expect(markdown).toMatch(/^\| 2 \| [\d.]+ \([\d.]+–[\d.]+\) \| [\d.]+ \([\d.]+–[\d.]+\) \| 1\.00× \| 1\.00× \|$/m);
  });

  test('GIVEN the prompt worker on and off THEN the simulated results are the same', () => {
    // From dist/: the worker thread then loads JavaScript instead of compiling the hashing modules under ts-node.
    const { runFleetScale: compiledRun } = compiledModule<typeof FleetScale>('router/bench/fleet-scale');
    const run = (promptWorker: 'on' | 'off') =>
      compiledRun({ instances: [3], seconds: 6, policy: 'sagemaker-prefix-aware', inProcess: true, promptWorker })
        .rows[0];
    const [on, off] = [run('on'), run('off')];
    expect([on.requests, on.hitRate]).toEqual([off.requests, off.hitRate]);
  }, 30_000);

  test('GIVEN a fleet size THEN the workload scales rate and groups with it (7 instances = 6 req/s, 550 groups)', () => {
    expect(scaledLongContext(7, 900)).toBe('long-context?groups=550&rate=6&duration=900');
    expect(scaledLongContext(112, 3600)).toBe('long-context?groups=8800&rate=96&duration=3600');
  });

  test('GIVEN the flags docs/benchmarks.md shows THEN they parse; out-of-range ones are refused naming the flag', () => {
    expect(parseArgs(['--instances', '7,112', '--seconds', '300', '--cpu-prof', '/tmp/prof'])).toEqual({
      instances: [7, 112],
      seconds: 300,
      policy: 'sagemaker-prefix-aware',
      cpuProf: '/tmp/prof',
      promptWorker: 'auto',
      repeat: 1,
    });
    expect(parseArgs(['--repeat', '3']).repeat).toBe(3);
    expect(() => parseArgs(['--repeat', '0'])).toThrow('--repeat must be an integer between 1 and 20 (got "0")');
    expect(parseArgs(['--prompt-worker', 'off']).promptWorker).toBe('off');
    expect(() => parseArgs(['--prompt-worker', 'maybe'])).toThrow(
      '--prompt-worker must be auto, on or off (got maybe)',
    );
    expect(() => parseArgs(['--instances', '0,7'])).toThrow(
      '--instances must list integers between 1 and 1024 (got 0,7)',
    );
    expect(() => parseArgs(['--seconds', '0'])).toThrow(
      '--seconds must be a number greater than 0 and at most 86400 (got "0")',
    );
    expect(() => parseArgs(['--seconds', '0x10'])).toThrow(
      '--seconds must be a number greater than 0 and at most 86400 (got "0x10")',
    );
  });
});
