import { builtinProfile } from '../../../router/src/emulator/engine-profile';
import type { RequestRecord } from '../../../router/src/report/request-record';
import { simulate, type SimulationConfig } from '../../../router/src/sim/simulator';
import { parseWorkloadSpec } from '../../../router/src/workload';

// One request at a time (a prediction made with events in hand is exact), 10 groups sharing a 1,000-token prefix.
const SPEC =
  'long-context?groups=10&prefixTokens=1000&suffixTokens=50..100&outputTokens=20&count=80&seed=7&concurrency=1';
const p5 = builtinProfile('p5-llama-3.1-70b');
const EVENTS = { delayMs: 0, lossRate: 0 };

function run(extra: Partial<SimulationConfig>): ReturnType<typeof simulate> {
  return simulate({
    workload: parseWorkloadSpec(SPEC),
    policy: { name: 'cache-aware' },
    seed: 4,
    instances: 3,
    profile: p5,
    ...extra,
  });
}

const served = (records: readonly RequestRecord[]) => records.filter((r) => r.error === undefined);
const overPredicted = (records: readonly RequestRecord[]) =>
  served(records).filter((r) => (r.predictedCachedTokens ?? 0) > (r.cachedPromptTokens ?? 0));
const mispredicted = (records: readonly RequestRecord[]) =>
  served(records).filter((r) => (r.predictedCachedTokens ?? 0) !== (r.cachedPromptTokens ?? 0));

describe('when an engine restarts mid-run and the routers never see it leave', () => {
  const restartAt = (records: readonly RequestRecord[]) => records[Math.floor(records.length / 2)].sentAtMs + 1;
  const atMs = restartAt(run({}).records);
  const restart = { instance: 0, atMs, downMs: 0 };
  const afterOnRestarted = (records: readonly RequestRecord[]) =>
    served(records).filter((r) => r.sentAtMs > atMs && r.instance === 'instance-0');

  it('GIVEN the estimate THEN the router still predicts hits the restarted engine no longer holds', () => {
    expect(overPredicted(afterOnRestarted(run({ engineRestart: restart }).records)).length).toBeGreaterThan(0);
  });

  it('GIVEN engine events THEN it predicts only what the engine holds again (nothing missing on it)', () => {
    const records = run({ engineRestart: restart, kvEvents: EVENTS }).records;
    expect(afterOnRestarted(records).length).toBeGreaterThan(0);
    expect(mispredicted(records)).toEqual([]);
  });

  it('GIVEN a request in flight on it THEN that request fails as a live client sees a broken connection', () => {
    const inFlight = run({}).records.find((r) => r.sentAtMs < atMs && r.sentAtMs + r.e2eMs > atMs)!;
    const records = run({ engineRestart: { instance: Number(inFlight.instance!.slice(-1)), atMs, downMs: 0 } }).records;
    const failed = records.filter((r) => r.error !== undefined);
    expect(failed.map((r) => [r.id, r.error])).toEqual([[inFlight.id, 'stream_cut']]);
  });

  it('GIVEN a down time THEN no router sends to it until it is back', () => {
    const records = run({ engineRestart: { instance: 0, atMs, downMs: 60_000 } }).records;
    const during = records.filter((r) => r.sentAtMs >= atMs && r.sentAtMs < atMs + 60_000);
    expect(during.length).toBeGreaterThan(0);
    expect(during.filter((r) => r.instance === 'instance-0')).toEqual([]);
  });

  it.each(['least-outstanding-requests', 'round-robin', 'random'] as const)(
    'GIVEN policy %s (no per-instance health check while the snapshot says all are healthy) and a down time THEN no router sends to it until it is back, then they do again',
    (name) => {
      const downMs = 5_000;
      const records = run({ policy: { name }, engineRestart: { instance: 0, atMs, downMs } }).records;
      const during = records.filter((r) => r.sentAtMs >= atMs && r.sentAtMs < atMs + downMs);
      expect(during.length).toBeGreaterThan(0);
      expect(during.filter((r) => r.instance === 'instance-0')).toEqual([]);
      const after = records.filter((r) => r.sentAtMs >= atMs + downMs);
      expect(after.map((r) => r.instance)).toContain('instance-0');
    },
  );
});

describe('when 30 % of the requests reach the engines around the routers', () => {
  const groupOf = new Map([...parseWorkloadSpec(SPEC).requests()].map((r) => [r.id, r.group]));
  /** Routed requests whose group the routers never routed before: only bypassing requests could have cached it. */
  function firstRoutedOfGroup(records: readonly RequestRecord[]): RequestRecord[] {
    const seen = new Set<number | undefined>();
    return [...records]
      .sort((a, b) => a.sentAtMs - b.sentAtMs)
      .filter((r) => {
        const first = !seen.has(groupOf.get(r.id));
        seen.add(groupOf.get(r.id));
        return first;
      });
  }

  it('GIVEN engine events THEN the routers see the prefixes bypassing requests cached, and predict every hit', () => {
    const result = run({ bypassShare: 0.3, kvEvents: EVENTS });
    expect(result.bypassed).toBeGreaterThan(10);
    expect(result.records.length + result.bypassed!).toBe(80);
    expect(firstRoutedOfGroup(result.records).some((r) => (r.predictedCachedTokens ?? 0) >= 960)).toBe(true);
    expect(mispredicted(result.records)).toEqual([]);
  });

  it('GIVEN the estimate THEN a group first cached by bypassing traffic is predicted cold', () => {
    const result = run({ bypassShare: 0.3 });
    expect(firstRoutedOfGroup(result.records).every((r) => (r.predictedCachedTokens ?? 0) === 0)).toBe(true);
  });

  it('GIVEN two strategies THEN the same requests bypass (by seed and id only)', () => {
    const a = run({ bypassShare: 0.3 });
    const b = run({ bypassShare: 0.3, policy: { name: 'random' } });
    expect(new Set(b.records.map((r) => r.id))).toEqual(new Set(a.records.map((r) => r.id)));
  });
});

describe('when two router replicas share the traffic without published state', () => {
  it('GIVEN the estimate THEN each misses what the other sent; GIVEN engine events THEN both predict every hit', () => {
    expect(mispredicted(run({ routers: 2 }).records).length).toBeGreaterThan(0);
    expect(mispredicted(run({ routers: 2, kvEvents: EVENTS }).records)).toEqual([]);
  });
});

describe('when a scenario is out of range', () => {
  it.each([
    [
      { engineRestart: { instance: 3, atMs: 0, downMs: 0 } },
      'engineRestart.instance must be an integer between 0 and 2 (got 3)',
    ],
    [
      { engineRestart: { instance: -1, atMs: 0, downMs: 0 } },
      'engineRestart.instance must be an integer between 0 and 2 (got -1)',
    ],
    [
      { engineRestart: { instance: 0, atMs: -1, downMs: 0 } },
      'engineRestart.atMs must be a finite number >= 0 (got -1)',
    ],
    [
      { engineRestart: { instance: 0, atMs: 0, downMs: 600_001 } },
      'engineRestart.downMs must be between 0 and 600000 (got 600001)',
    ],
    [{ bypassShare: 1.01 }, 'bypassShare must be between 0 and 1 (got 1.01)'],
    [{ bypassShare: -0.01 }, 'bypassShare must be between 0 and 1 (got -0.01)'],
  ])('GIVEN %j THEN the run is refused naming the field and its range', (extra, message) => {
    expect(() => run(extra as Partial<SimulationConfig>)).toThrow(message);
  });
});
