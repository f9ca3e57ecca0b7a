import { builtinProfile } from '../../../router/src/emulator/engine-profile';
import { expandPolicySweep } from '../../../router/src/policy';
import { renderHtml } from '../../../router/src/report/render-html';
import { renderMarkdown } from '../../../router/src/report/render-markdown';
import { terminalSummary } from '../../../router/src/report/terminal-summary';
import { compareStrategies } from '../../../router/src/sim/compare-strategies';
import { simulate } from '../../../router/src/sim/simulator';
import { parseWorkloadSpec, type Workload, type WorkloadRequest } from '../../../router/src/workload';

const p5 = builtinProfile('p5-llama-3.1-70b');
const tiny = builtinProfile('tiny');

describe('when cache-aware is simulated against a SageMaker sweep', () => {
  test('GIVEN a seeded shared-system-prompt workload that bursts THEN cache-aware beats the best sagemaker-prefix-aware setting on P90 TTFT', () => {
    // 4 system prompts of 2,048 tokens, 1,024-token questions at 60 req/s on 4 instances: one instance per prompt
    // (what a prefix hash gives) cannot keep up; spilling by request count does not see the queued prefill.
    const workload = parseWorkloadSpec(
      'shared-system?groups=4&promptsPerGroup=30&systemTokens=2048&questionTokens=1024&outputTokens=32&rate=60&seed=5',
    );
    const sweep = expandPolicySweep('sagemaker-prefix-aware?prefixLength=1024,8192,65536&concurrencyThreshold=4,32');
    const { report } = compareStrategies({
      workload,
      policies: [{ name: 'cache-aware' }, ...sweep],
      instances: 4,
      profile: p5,
    });
    const cacheAware = report.strategies.find((s) => s.strategy.name === 'cache-aware')!;
    const bestP90 = Math.min(...report.strategies.filter((s) => s !== cacheAware).map((s) => s.ttftMs.p90!));
    expect(cacheAware.requests).toBe(120);
    expect(cacheAware.ttftMs.p90!).toBeLessThan(bestP90);
    // Decision reasons are recorded per request and reported as shares.
    const shares = Object.values(cacheAware.decisionReasons);
    expect(shares.reduce((a, b) => a + b, 0)).toBeCloseTo(1, 9);
    expect(Object.keys(cacheAware.decisionReasons)).toEqual(expect.arrayContaining(['cache-match', 'cold-rendezvous']));
    // Predicted against delivered hits are reported.
    expect(cacheAware.predictedHit).not.toBeNull();
    expect(cacheAware.predictedHit!.predicted).toBeGreaterThan(0.3);
  });
});

describe('when cache-aware routes multi-turn chat at light load', () => {
  test.each([1, 5])(
    'GIVEN short-chat seed %i (8 system prompts of unequal popularity over 7 instances) THEN every instance is sent 0.75–1.25 × the mean share, at a hit rate near the fleet ceiling',
    (seed) => {
      // Issue 12's share target. Before the over-share filter's floor: 0.59–1.19 (seed 1) and 0.58–1.15 (seed 5), as
      // instances holding only rare system prompts got few new conversations.
      const { report } = compareStrategies({
        workload: parseWorkloadSpec(`short-chat?seed=${seed}`),
        policies: [{ name: 'cache-aware' }],
        instances: 7,
        profile: p5,
      });
      const [cacheAware] = report.strategies;
      const shares = cacheAware.instances.map((i) => i.share * cacheAware.instances.length);
      expect(Math.min(...shares)).toBeGreaterThanOrEqual(0.75);
      expect(Math.max(...shares)).toBeLessThanOrEqual(1.25);
      expect(cacheAware.cacheHitRate.ofFleetCeiling!).toBeGreaterThan(0.97);
    },
  );
});

describe('when the engine rejects requests in a simulation', () => {
  test('GIVEN prompts longer than the context and max_tokens over what is left THEN they are vLLM 400s counted by code and the run goes on', () => {
    // tiny: maxModelLen 1,024. Prompts of 600 + 10..700 tokens: some over the context; 300 output tokens: some over what is left.
    const workload = parseWorkloadSpec(
      'long-context?groups=3&prefixTokens=600&suffixTokens=10..700&outputTokens=300&rate=50&count=60&seed=2',
    );
    const result = simulate({ workload, policy: { name: 'cache-aware' }, instances: 2, profile: tiny });
    expect(result.records).toHaveLength(60);
    const failed = result.records.filter((r) => r.error !== undefined);
    const ok = result.records.filter((r) => r.error === undefined);
    expect(failed.length).toBeGreaterThan(0);
    expect(ok.length).toBeGreaterThan(0);
    for (const r of failed) {
      expect(r.error).toBe('http_400:BadRequestError');
      expect(r.ttftMs).toBeNull();
      expect(r.reason).toBeDefined();
    }
    const { report } = compareStrategies({
      workload,
      policies: [{ name: 'cache-aware' }],
      instances: 2,
      profile: tiny,
    });
    expect(report.strategies[0].errorsByCode).toEqual({ 'http_400:BadRequestError': failed.length });
  });

  test("GIVEN prompts longer than the context THEN each error row carries the engine's refusal and every report shows it beside the code", () => {
    // tiny: maxModelLen 1,024; every prompt of 1,100..1,200 tokens is refused with vLLM's context-length message.
    const workload = parseWorkloadSpec(
      'long-context?groups=2&prefixTokens=1100&suffixTokens=10..100&outputTokens=4&rate=50&count=6&seed=2',
    );
    const result = simulate({ workload, policy: { name: 'cache-aware' }, instances: 2, profile: tiny });
    expect(result.records.map((r) => r.error)).toEqual(Array(6).fill('http_400:BadRequestError'));
    for (const r of result.records)
      expect(r.errorDetail).toMatch(
        /^This model's maximum context length is 1024 tokens\. However, your request has \d+ input tokens/,
      );
    const { report } = compareStrategies({
      workload,
      policies: [{ name: 'cache-aware' }],
      instances: 2,
      profile: tiny,
    });
    const summary = report.strategies[0];
    // Every request in the measured window failed, all with the one code.
    expect(summary.succeeded).toBe(0);
    expect(summary.errorsByCode).toEqual({ 'http_400:BadRequestError': summary.errors });
    expect(summary.errorMessages!['http_400:BadRequestError']).toBe(result.records[0].errorDetail);
    const shown = new RegExp(
      `http_400:BadRequestError × ${summary.errors} \\(first: "This model's maximum context length is 1024 tokens\\.`,
    );
    expect(renderMarkdown(report)).toMatch(shown);
    expect(terminalSummary(report).replace(/\n\s*/g, ' ')).toMatch(shown);
    expect(renderHtml(report)).toContain(
      `http_400:BadRequestError × ${summary.errors} (first: &quot;This model&#39;s maximum context length is 1024 tokens.`,
    );
  });
});

describe('when several router replicas share the traffic', () => {
  const workload = parseWorkloadSpec(
    'long-context?groups=6&prefixTokens=300&suffixTokens=20..40&outputTokens=8&rate=40&count=80&seed=3',
  );

  test.each([1, 2, 4])(
    'GIVEN %i replicas THEN every request finishes once and the same seed repeats the run',
    (routers) => {
      const run = () => simulate({ workload, policy: { name: 'cache-aware' }, instances: 3, profile: tiny, routers });
      const a = run();
      expect(a.records).toHaveLength(80);
      expect(new Set(a.records.map((r) => r.id)).size).toBe(80);
      expect(run().records.map((r) => r.instance)).toEqual(a.records.map((r) => r.instance));
    },
  );

  test('GIVEN replicas with no shared state THEN cold placement by rendezvous keeps the hit rate near one router', () => {
    const hit = (routers: number) => {
      const r = simulate({ workload, policy: { name: 'cache-aware' }, instances: 3, profile: tiny, routers });
      const cached = r.records.reduce((s, x) => s + (x.cachedPromptTokens ?? 0), 0);
      const prompt = r.records.reduce((s, x) => s + (x.promptTokens ?? 0), 0);
      return cached / prompt;
    };
    expect(hit(4)).toBeGreaterThan(0.9 * hit(1));
  });

  test("GIVEN replicas sharing the load view and the policy (diagnostics) THEN the run is one router's, and each kind of sharing alone differs", () => {
    // Twice the rate: at 40/s no placement of this seed depends on the load view alone (cold prefixes are spread by
    // index contents), so sharing it would change nothing to see.
    const busier = parseWorkloadSpec(
      'long-context?groups=6&prefixTokens=300&suffixTokens=20..40&outputTokens=8&rate=80&count=80&seed=3',
    );
    const run = (routers: number, replicaSharing?: { load?: boolean; policy?: boolean }) =>
      simulate({
        workload: busier,
        policy: { name: 'cache-aware' },
        instances: 3,
        profile: tiny,
        routers,
        replicaSharing,
      }).records.map((r) => [r.id, r.instance, r.ttftMs, r.reason]);
    const one = run(1);
    expect(run(4, { load: true, policy: true })).toEqual(one);
    expect(run(4)).not.toEqual(one);
    expect(run(4, { load: true })).not.toEqual(run(4));
    expect(run(4, { policy: true })).not.toEqual(run(4));
  });

  test.each([0, 65])('GIVEN %i replicas THEN simulate refuses with the range', (routers) => {
    expect(() => simulate({ workload, policy: { name: 'random' }, instances: 3, profile: tiny, routers })).toThrow(
      /routers must be an integer between 1 and 64/,
    );
  });
});

describe("when router replicas observe the instances' published state", () => {
  // The bench's shared-system workload: 1,024 requests over 7 instances.
  const workload = parseWorkloadSpec('shared-system');
  const run = (routers: number, observeIntervalMs = 0, on: Workload = workload) => {
    const r = simulate({
      workload: on,
      policy: { name: 'cache-aware' },
      instances: 7,
      profile: p5,
      routers,
      observeIntervalMs,
    });
    const ttft = r.records.map((x) => x.ttftMs!).sort((a, b) => a - b);
    const cached = r.records.reduce((s, x) => s + (x.cachedPromptTokens ?? 0), 0);
    const prompt = r.records.reduce((s, x) => s + (x.promptTokens ?? 0), 0);
    return { p90: ttft[Math.floor(0.9 * (ttft.length - 1))], hit: cached / prompt, records: r.records };
  };

  test("GIVEN four replicas THEN observing every 10 ms gives one router's P90 and hit rate, which their own sends alone do not", () => {
    // Short-chat: a turn whose conversation another replica placed is cold to a blind one (P90 1.27× one router's).
    // On shared-system blind replicas now have one router's P90 too (cold prefixes spread by index contents from the
    // first prompt; 1.15× before), so there only observing is checked.
    const chat = parseWorkloadSpec('short-chat?duration=120');
    for (const on of [chat, workload]) {
      const one = run(1, 0, on);
      const observing = run(4, 10, on);
      if (on === chat) expect(run(4, 0, on).p90).toBeGreaterThan(1.1 * one.p90);
      expect(observing.p90).toBeLessThanOrEqual(1.1 * one.p90);
      expect(observing.hit).toBeGreaterThanOrEqual(0.95 * one.hit);
    }
  });

  test('GIVEN one router THEN observing changes nothing it did not already know: the same decisions', () => {
    const decisions = (r: ReturnType<typeof run>) => r.records.map((x) => [x.id, x.instance, x.reason]);
    expect(decisions(run(1, 10))).toEqual(decisions(run(1)));
  });

  test('GIVEN a prompt the engine refuses THEN the instance does not publish its blocks, as the live router records only on acceptance', () => {
    // Two completions on tiny engines (maxModelLen 1,024 tokens): a 1,200-token prompt (refused: 400), then, 50 ms
    // later from the other replica, its first 600 tokens. Published on send, the refused prompt's blocks would show
    // the second replica a cached prefix the engine never computed.
    const long = Array.from({ length: 1200 }, (_, i) => `w${i % 97} `)
      .join('')
      .slice(0, 4800);
    const requests: WorkloadRequest[] = [
      { kind: 'completion', index: 0, id: 'refused', arrivalMs: 0, maxTokens: 4, prompt: long },
      { kind: 'completion', index: 1, id: 'follower', arrivalMs: 50, maxTokens: 4, prompt: long.slice(0, 2400) },
    ];
    const workload: Workload = {
      kind: 'trace',
      spec: 'two-completions',
      parameters: {},
      load: { mode: 'open-trace', speedup: 1 },
      expectedRequests: 2,
      expectedRequestsExact: true,
      description: 'a refused prompt and a shorter one with its start',
      notes: [],
      *requests() {
        yield* requests;
      },
    };
    const result = simulate({
      workload,
      policy: { name: 'cache-aware' },
      instances: 3,
      profile: tiny,
      routers: 2,
      observeIntervalMs: 1,
    });
    const byId = new Map(result.records.map((r) => [r.id, r]));
    expect(byId.get('refused')!.error).toBeDefined();
    expect(byId.get('follower')!).toMatchObject({ reason: 'cold-rendezvous', predictedCachedTokens: 0 });
  });

  test.each([-1, 60_001, Number.NaN])(
    'GIVEN observeIntervalMs %p THEN simulate refuses with the range',
    (observeIntervalMs) => {
      expect(() =>
        simulate({ workload, policy: { name: 'cache-aware' }, instances: 3, profile: tiny, observeIntervalMs }),
      ).toThrow(/observeIntervalMs must be between 0 and 60000/);
    },
  );
});
