import { runLiveBenchmark, toStrategyRun, type LiveBenchmarkResult } from '../../../router/src/benchmark';
import {
  startEmulator,
  startEmulatorFleet,
  type RunningEmulator,
  type RunningEmulatorFleet,
} from '../../../router/src/emulator';
import { startRouter, type RunningRouter } from '../../../router/src/server';
import { buildReport } from '../../../router/src/report';
import { parseWorkloadSpec } from '../../../router/src/workload';

/**
 * The live benchmark against real servers on loopback: emulated vLLM instances (tiny profile, 20× faster than
 * real time) behind the real router, and one emulator directly. Load is kept low (closed loop, 2 in flight) so
 * the tiny KV cache never preempts, which makes the Prometheus counters equal the usage sums exactly.
 */
const TIME_SCALE = 20;
// 300-token system prompts (1,200 characters) exceed the 1,024-character prefix key, so each group keys alike.
const SPEC =
  'shared-system?groups=2&promptsPerGroup=6&systemTokens=300&questionTokens=20&outputTokens=6&order=grouped&concurrency=2';

function usageSums(result: LiveBenchmarkResult): { prompt: number; cached: number } {
  let prompt = 0;
  let cached = 0;
  for (const r of result.records) {
    prompt += r.promptTokens ?? 0;
    cached += r.cachedPromptTokens ?? 0;
  }
  return { prompt, cached };
}

describe('when the live benchmark drives emulated vLLM behind the router', () => {
  let fleet: RunningEmulatorFleet;
  let router: RunningRouter;
  let result: LiveBenchmarkResult;
  const workload = parseWorkloadSpec(SPEC);

  beforeAll(async () => {
    fleet = await startEmulatorFleet(2, { profile: 'tiny', timeScale: TIME_SCALE });
    router = await startRouter({
      backends: fleet.urls,
      port: 0,
      logLevel: 'silent',
      healthCheck: { intervalMs: 0 },
      policy: { name: 'sagemaker-prefix-aware', prefixLength: 1024 },
      routingHeaders: 'all',
    });
    result = await runLiveBenchmark({
      url: router.url,
      workload,
      timeScale: TIME_SCALE,
      backendMetricsUrls: fleet.urls,
      ceilings: { fleetCapacityBlocks: 2 * 128 },
    });
  });
  afterAll(async () => {
    await router.close();
    await fleet.close();
  });

  it('GIVEN no --model THEN the served model is discovered and every request succeeds', () => {
    expect(result.model).toBe('tiny-emulated-model');
    expect(result.sent).toBe(12);
    expect(result.failed).toBe(0);
  });

  it('THEN every request has its first token before its end, and exactly max_tokens of output', () => {
    for (const r of result.records) {
      expect(r.ttftMs).not.toBeNull();
      expect(r.ttftMs!).toBeGreaterThan(0);
      expect(r.ttftMs!).toBeLessThan(r.e2eMs);
      expect(r.outputTokens).toBe(6);
    }
  });

  it('THEN repeated prefixes come back as cached tokens: the last request of each group reuses its system prompt', () => {
    const requests = [...workload.requests()];
    for (const group of [0, 1]) {
      const last = requests.filter((r) => r.group === group).pop()!;
      const record = result.records.find((r) => r.id === last.id)!;
      expect(record.cachedPromptTokens!).toBeGreaterThanOrEqual(18 * 16);
    }
    const sums = usageSums(result);
    expect(sums.cached / sums.prompt).toBeGreaterThan(0.5);
  });

  it("THEN the instance header is counted: each instance's records equal the router's decisions for it, and each group stayed on one instance", () => {
    const ids = router.backends.map((b) => b.name);
    expect(result.instancesSeen.every((i) => ids.includes(i))).toBe(true);
    for (const backend of router.backends) {
      expect(result.records.filter((r) => r.instance === backend.name)).toHaveLength(backend.decisions);
    }
    const groupOf = new Map([...workload.requests()].map((r) => [r.id, r.group]));
    for (const group of [0, 1]) {
      expect(new Set(result.records.filter((r) => groupOf.get(r.id) === group).map((r) => r.instance)).size).toBe(1);
    }
  });

  it("THEN every record carries the router's decision time, unscaled", () => {
    for (const r of result.records) {
      expect(r.decisionMicros).toBeGreaterThan(0);
      // Units and order, not a timing bound: the decision is part of the request's time to first token. Record times
      // are model time (wall × TIME_SCALE, in ms), the decision time wall microseconds; converted to the same unit
      // and clock, the part must fit inside the whole (a decision time read in the wrong unit would not).
      expect(r.decisionMicros! / 1000).toBeLessThan(r.ttftMs! / TIME_SCALE);
    }
    expect(result.notes.some((n) => n.includes('x-prefix-router-decision-us'))).toBe(false);
  });

  it('THEN the Prometheus deltas equal the usage sums (queries = prompt tokens, hits = cached tokens), per backend and in total', () => {
    const sums = usageSums(result);
    expect(result.prometheus).toEqual({ prefixCacheQueries: sums.prompt, prefixCacheHits: sums.cached });
    for (const b of result.backendMetrics) {
      const instance = router.backends[fleet.urls.findIndex((u) => b.url.startsWith(u))].name;
      const mine = result.records.filter((r) => r.instance === instance);
      expect(b.queries).toBe(mine.reduce((s, r) => s + r.promptTokens!, 0));
      expect(b.hits).toBe(mine.reduce((s, r) => s + r.cachedPromptTokens!, 0));
    }
    const report = buildReport({
      mode: 'live',
      workload,
      runs: [
        toStrategyRun(
          result,
          'sagemaker-prefix-aware',
          router.backends.map((b) => b.name),
        ),
      ],
    });
    expect(report.strategies[0].cacheHitRate.prometheus).toBeCloseTo(
      report.strategies[0].cacheHitRate.engineReported!,
      12,
    );
    expect(report.strategies[0].instances.map((i) => i.id).sort()).toEqual(router.backends.map((b) => b.name).sort());
  });

  it('THEN the ceilings cover exactly the requests sent, count the prompt tokens the engines counted, and bound the hit rate', () => {
    const sums = usageSums(result);
    const c = result.ceilings!;
    expect(c.requests).toBe(12);
    expect(c.promptTokens).toBe(sums.prompt);
    expect(sums.cached / sums.prompt).toBeLessThanOrEqual(c.idealHitRate!);
    expect(c.fleetHitRate!).toBeLessThanOrEqual(c.idealHitRate!);
  });
});

describe('when the live benchmark drives one emulator directly', () => {
  let emulator: RunningEmulator;
  beforeAll(async () => {
    emulator = await startEmulator({ profile: 'tiny', timeScale: TIME_SCALE });
  });
  afterAll(() => emulator.close());

  it('GIVEN no instance header THEN records have no instance, a note says so, and hit rates still agree', async () => {
    const result = await runLiveBenchmark({
      url: emulator.url,
      workload: parseWorkloadSpec(SPEC),
      model: emulator.modelName,
      timeScale: TIME_SCALE,
      backendMetricsUrls: [emulator.url],
    });
    expect(result.failed).toBe(0);
    expect(result.instancesSeen).toEqual([]);
    expect(result.records.every((r) => r.instance === null)).toBe(true);
    expect(result.notes.some((n) => n.includes('x-prefix-router-instance'))).toBe(true);
    const sums = usageSums(result);
    expect(sums.cached).toBeGreaterThan(0);
    expect(result.prometheus).toEqual({ prefixCacheQueries: sums.prompt, prefixCacheHits: sums.cached });
  });
});
