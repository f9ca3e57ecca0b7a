import fc from 'fast-check';
import { builtinProfile } from '../../../router/src/emulator/engine-profile';
import type { PolicyConfig } from '../../../router/src/policy';
import { CeilingTracker } from '../../../router/src/report/ceilings';
import { simulate, toStrategyRun, type SimulationConfig } from '../../../router/src/sim/simulator';
import { parseWorkloadSpec } from '../../../router/src/workload';

const tiny = builtinProfile('tiny');
// 6 groups sharing a 300-token (1,200-character) prefix: longer than the minimum PrefixLength of 1,024
// characters, so SageMaker's key covers only the shared part and a group always maps to one instance.
const grouped = 'long-context?groups=6&prefixTokens=300&suffixTokens=20..40&outputTokens=8&rate=40&count=80&seed=3';

function run(overrides: Partial<SimulationConfig> & { policy: PolicyConfig }) {
  return simulate({ workload: parseWorkloadSpec(grouped), instances: 3, profile: tiny, ...overrides });
}

function hitRate(result: ReturnType<typeof simulate>): number {
  let cached = 0;
  let prompt = 0;
  for (const r of result.records) {
    cached += r.cachedPromptTokens ?? 0;
    prompt += r.promptTokens ?? 0;
  }
  return cached / prompt;
}

describe('simulate', () => {
  test('GIVEN a workload WHEN simulated THEN every request finishes once, on a configured instance', () => {
    const result = run({ policy: { name: 'random' } });
    expect(result.records).toHaveLength(80);
    expect(new Set(result.records.map((r) => r.id)).size).toBe(80);
    for (const r of result.records) {
      expect(result.instanceIds).toContain(r.instance);
      expect(r.ttftMs).toBeGreaterThan(0);
      expect(r.e2eMs).toBeGreaterThanOrEqual(r.ttftMs!);
      expect(r.outputTokens).toBe(8);
    }
  });

  test('GIVEN the same seed WHEN simulated twice THEN the runs are identical', () => {
    const a = run({ policy: { name: 'random' }, seed: 7 });
    const b = run({ policy: { name: 'random' }, seed: 7 });
    const strip = (r: ReturnType<typeof simulate>) => r.records.map(({ decisionMicros: _d, ...rest }) => rest);
    expect(strip(a)).toEqual(strip(b));
    const c = run({ policy: { name: 'random' }, seed: 8 });
    expect(c.records.map((r) => r.instance)).not.toEqual(a.records.map((r) => r.instance));
  });

  test('GIVEN sagemaker-prefix-aware WHEN requests share a prefix longer than prefixLength THEN a group always lands on one instance', () => {
    const result = run({ policy: { name: 'sagemaker-prefix-aware', prefixLength: 1024, concurrencyThreshold: 1024 } });
    const workload = [...parseWorkloadSpec(grouped).requests()];
    const groupOf = new Map(workload.map((r) => [r.id, r.group]));
    const instancesByGroup = new Map<number | undefined, Set<string | null>>();
    for (const r of result.records) {
      const g = groupOf.get(r.id);
      if (!instancesByGroup.has(g)) instancesByGroup.set(g, new Set());
      instancesByGroup.get(g)!.add(r.instance);
    }
    for (const set of instancesByGroup.values()) expect(set.size).toBe(1);
  });

  test('GIVEN shared prefixes and small caches WHEN prefix-aware routing is used THEN it hits the cache more than random', () => {
    const random = run({ policy: { name: 'random' } });
    const affinity = run({
      policy: { name: 'sagemaker-prefix-aware', prefixLength: 1024, concurrencyThreshold: 1024 },
    });
    expect(hitRate(affinity)).toBeGreaterThan(hitRate(random) + 0.1);
  });

  test('GIVEN a closed loop of one on one instance WHEN simulated THEN each request is sent the instant the previous one finished', () => {
    const result = simulate({
      workload: parseWorkloadSpec(
        'shared-system?groups=2&promptsPerGroup=4&systemTokens=100&questionTokens=10&outputTokens=5&concurrency=1',
      ),
      instances: 1,
      profile: tiny,
      policy: { name: 'round-robin' },
    });
    const sends = [...result.records].sort((a, b) => a.sentAtMs - b.sentAtMs);
    expect(sends[0].sentAtMs).toBe(0);
    for (let i = 1; i < sends.length; i++)
      expect(sends[i].sentAtMs).toBeCloseTo(sends[i - 1].sentAtMs + sends[i - 1].e2eMs, 9);
  });

  test('GIVEN any small workload and policy WHEN the fast simulator runs THEN it matches one-step-at-a-time lockstep exactly', () => {
    const policies: PolicyConfig[] = [
      { name: 'random' },
      { name: 'round-robin' },
      { name: 'least-outstanding-requests' },
      { name: 'sagemaker-prefix-aware', prefixLength: 1024, concurrencyThreshold: 2 },
    ];
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 3 }),
        fc.integer({ min: 1, max: 4 }),
        fc.integer({ min: 0, max: 1000 }),
        fc.oneof(
          fc.constant('rate=200'),
          fc.constant('rate=20'),
          fc.constant('concurrency=3'),
          fc.constant('concurrency=9'),
        ),
        // Jitter: decode stretches planned ahead and cut short by a send must give their draws back.
        fc.constantFrom(0, 0.05),
        // A warm-up: engines stay in step until its snapshot, then plan ahead.
        fc.constantFrom(0, 40),
        (p, instances, seed, load, stepJitterCv, warmupMs) => {
          const spec =
            `long-context?groups=4&prefixTokens=260&suffixTokens=10..200&outputTokens=1..40&count=40&seed=${seed}&${load}`.replace(
              'outputTokens=1..40',
              `outputTokens=${1 + (seed % 40)}`,
            );
          const config = {
            workload: parseWorkloadSpec(spec),
            instances,
            profile: tiny,
            policy: policies[p],
            seed,
            stepJitterCv,
            warmupMs,
          };
          const strip = (r: ReturnType<typeof simulate>) => ({
            records: r.records.map(({ decisionMicros: _d, ...rest }) => rest),
            // Everything but how many steps took the fast path, which lockstep never does.
            engines: r.engines.map(({ fastForwardedSteps: _f, ...rest }) => rest),
            prometheus: r.prometheus,
          });
          expect(strip(simulate({ ...config, stepping: 'fast' }))).toEqual(
            strip(simulate({ ...config, stepping: 'lockstep' })),
          );
        },
      ),
      { numRuns: 200 },
    );
  });

  test('GIVEN a multi-turn workload WHEN simulated THEN no turn is sent before the previous turn finished', () => {
    const workload = parseWorkloadSpec(
      'short-chat?rate=20&count=60&thinkSeconds=0.01&systemTokens=50..80&userTokens=5..20&outputTokens=4..8&seed=2',
    );
    const result = simulate({ workload, instances: 2, profile: tiny, policy: { name: 'least-outstanding-requests' } });
    const byId = new Map(result.records.map((r) => [r.id, r]));
    let dependent = 0;
    for (const request of workload.requests()) {
      if (request.dependsOnId === undefined) continue;
      const dep = byId.get(request.dependsOnId)!;
      expect(byId.get(request.id)!.sentAtMs).toBeGreaterThanOrEqual(dep.sentAtMs + dep.e2eMs);
      dependent++;
    }
    expect(dependent).toBeGreaterThan(0);
  });

  test('GIVEN a warm-up WHEN simulated THEN the measured window starts after it and the ceilings count only requests sent after it', () => {
    const ceilings = new CeilingTracker({ fleetCapacityBlocks: 3 * tiny.kvCapacityBlocks });
    const result = run({ policy: { name: 'round-robin' }, warmupMs: 500, ceilings });
    expect(result.window.startMs).toBe(500);
    expect(result.window.endMs).toBeGreaterThan(500);
    const measured = result.records.filter((r) => r.sentAtMs >= 500).length;
    expect(measured).toBeGreaterThan(0);
    expect(measured).toBeLessThan(80);
    expect(ceilings.result().requests).toBe(measured);
    expect(result.prometheus.prefixCacheQueries).toBeGreaterThan(0);
    const strategyRun = toStrategyRun(result);
    expect(strategyRun.strategy).toEqual({ name: 'round-robin', options: {} });
  });

  test.each([0, 1025, 2.5])('GIVEN %p instances WHEN simulated THEN it fails naming the range', (instances) => {
    expect(() =>
      simulate({ workload: parseWorkloadSpec(grouped), instances, profile: tiny, policy: { name: 'random' } }),
    ).toThrow(/instances must be an integer between 1 and 1024/);
  });
});

describe('simulate with a send window', () => {
  test.each([
    ['open loop', 'rate=40'],
    ['closed loop', 'concurrency=4'],
  ])(
    'GIVEN %s and sendUntilMs WHEN simulated THEN nothing is sent at or after it and in-flight requests finish',
    (_name, load) => {
      const workload = parseWorkloadSpec(
        `long-context?groups=6&prefixTokens=300&suffixTokens=20..40&outputTokens=8&count=400&seed=3&${load}`,
      );
      const all = simulate({ workload, instances: 2, profile: tiny, policy: { name: 'random' } });
      const cut = Math.max(...all.records.map((r) => r.sentAtMs)) / 2;
      const windowed = simulate({
        workload,
        instances: 2,
        profile: tiny,
        policy: { name: 'random' },
        sendUntilMs: cut,
      });
      expect(windowed.records.length).toBeGreaterThan(0);
      expect(windowed.records.length).toBeLessThan(all.records.length);
      for (const r of windowed.records) expect(r.sentAtMs).toBeLessThan(cut);
    },
  );
});
