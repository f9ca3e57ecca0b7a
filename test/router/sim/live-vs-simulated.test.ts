import { request } from 'undici';
import { startEmulatorFleet, type RunningEmulatorFleet } from '../../../router/src/emulator/emulator-server';
import { builtinProfile } from '../../../router/src/emulator/engine-profile';
import { policyDefinition, POLICY_NAMES, type PolicyConfig, type PolicyName } from '../../../router/src/policy';
import { INSTANCE_HEADER, startRouter } from '../../../router/src/server';
import { simulate } from '../../../router/src/sim/simulator';
import { openAiPath, parseWorkloadSpec, toOpenAiBody, type Workload } from '../../../router/src/workload';

/**
 * The simulator's claim to fame: it drives the same policy objects as the live router, so on the same workload
 * and seed both make the same decisions. Live: a real router in front of emulated vLLM instances on loopback,
 * requests sent one at a time over HTTP. Simulated: the same workload and policy in virtual time.
 */
const tiny = builtinProfile('tiny');
const p5 = builtinProfile('p5-llama-3.1-70b');
// Groups of a few requests share a 300-token prefix (longer than prefixLength 1024 characters); suffixes make every
// prompt unique. Instance ids are URLs with ephemeral ports, so where a group lands changes from run to run: with 12
// groups on 3 instances, all landing on one (a degenerate run, refused below) has odds 3 × 3^-12, not 1 in 81 as 5 had.
const workload: Workload = parseWorkloadSpec(
  'long-context?groups=12&prefixTokens=300&suffixTokens=10..60&outputTokens=3&count=40&seed=11&concurrency=1',
);

// Every registered policy, one request at a time; the options that make this workload exercise a policy's rule
// (the prefix shorter than the shared 300 tokens, a threshold that spills) are set here, the rest are defaults.
const optionsFor: Partial<Record<PolicyName, Omit<PolicyConfig, 'name'>>> = {
  'sagemaker-prefix-aware': { prefixLength: 1024, concurrencyThreshold: 4 },
};
// Every policy serve runs: one that reads the engines' own state (oracle; llm-d-precise without --kv-events) is refused live (below).
const policies: PolicyConfig[] = POLICY_NAMES.filter((name) => policyDefinition(name)?.engineState === undefined).map(
  (name) => ({ name, ...optionsFor[name] }),
);
const simulatorOnly = POLICY_NAMES.filter((name) => policyDefinition(name)?.engineState !== undefined);

describe('when serve is asked for a policy that reads the engines own state', () => {
  test.each(simulatorOnly)('GIVEN %s THEN startRouter refuses it, saying why, before listening', async (name) => {
    await expect(
      startRouter({ backends: ['http://127.0.0.1:1'], policy: { name }, port: 0, logLevel: 'silent' }),
    ).rejects.toThrow(new RegExp(`policy\\.name is refused: ${name} reads .*(simulate or plan|--kv-events)`));
  });
});

describe('when the same seeded workload runs live and simulated', () => {
  let fleet: RunningEmulatorFleet;

  beforeAll(async () => {
    fleet = await startEmulatorFleet(3, { profile: tiny, timeScale: 20 });
  });

  afterAll(async () => {
    await fleet.close();
  });

  test.each(policies.map((p) => [p.name, p] as const))(
    'GIVEN %s THEN the live router and the simulator choose the same instance for every request',
    async (_name, policy) => {
      const router = await startRouter({
        backends: fleet.urls,
        policy,
        seed: 42,
        port: 0,
        logLevel: 'silent',
        healthCheck: { intervalMs: 60_000 },
        routingHeaders: 'all',
      });
      const live: string[] = [];
      try {
        for (const r of workload.requests()) {
          const res = await request(`${router.url}${openAiPath(r)}`, {
            method: 'POST',
            headers: { 'content-type': 'application/json' },
            body: JSON.stringify(toOpenAiBody(r, { model: fleet.instances[0].modelName })),
          });
          await res.body.text();
          expect(res.statusCode).toBe(200);
          live.push(router.backends.find((b) => b.name === res.headers[INSTANCE_HEADER])!.id);
        }
      } finally {
        await router.close();
      }

      const simulated = simulate({
        workload,
        policy,
        seed: 42,
        instances: fleet.urls.length,
        instanceIds: router.backends.map((b) => b.id),
        profile: tiny,
        // Routing blocks are seeded by the model name (cache-aware): the live requests name the fleet's model.
        modelName: fleet.instances[0].modelName,
      });
      const simulatedOrder = [...simulated.records].sort((a, b) => a.sentAtMs - b.sentAtMs).map((r) => r.instance);

      expect(live).toHaveLength(40);
      expect(simulatedOrder).toEqual(live);
      // Not a degenerate pass: requests were spread over more than one instance.
      expect(new Set(live).size).toBeGreaterThan(1);
    },
  );
});

describe('when cache-aware runs live and simulated with several requests in flight', () => {
  let fleet: RunningEmulatorFleet;
  // Closed loop of 3: decisions see in-flight counts, queued prefill (until the first streamed token) and decoding
  // sequences, kept the same way by the router and the simulator.
  // The calibrated p5 profile at a time scale of 2: its steps last tens of (virtual) milliseconds, so a few
  // milliseconds of event-loop jitter rarely reorders a first token and an arrival.
  const concurrent: Workload = parseWorkloadSpec(
    'long-context?groups=12&prefixTokens=2000&suffixTokens=100..400&outputTokens=12&count=45&seed=11&concurrency=3',
  );

  beforeAll(async () => {
    fleet = await startEmulatorFleet(3, { profile: p5, timeScale: 2 });
  });

  afterAll(async () => {
    await fleet.close();
  });

  test('GIVEN concurrency 3 THEN the live router and the simulator decide alike until a load tie, and reach the same hit rate', async () => {
    const router = await startRouter({
      backends: fleet.urls,
      policy: { name: 'cache-aware' },
      seed: 42,
      port: 0,
      logLevel: 'silent',
      healthCheck: { intervalMs: 60_000 },
      routingHeaders: 'all',
    });
    const live = new Map<string, string>();
    const liveReasons: string[] = [];
    let liveCached = 0;
    let livePrompt = 0;
    try {
      // The workload's closed loop, live: keep 3 requests in flight, in workload order.
      const pending = [...concurrent.requests()];
      // Worker k starts once the router has decided k requests, so it decides the first three in workload order, as
      // the simulator does at time 0 (no first token can come back within those few milliseconds).
      const decided = () => router.backends.reduce((n, b) => n + b.decisions, 0);
      const worker = async (k: number): Promise<void> => {
        while (decided() < k) await new Promise((resolve) => setTimeout(resolve, 1));
        for (let r = pending.shift(); r !== undefined; r = pending.shift()) {
          const res = await request(`${router.url}${openAiPath(r)}`, {
            method: 'POST',
            headers: { 'content-type': 'application/json' },
            body: JSON.stringify(toOpenAiBody(r, { model: fleet.instances[0].modelName })),
          });
          const text = await res.body.text();
          expect(res.statusCode).toBe(200);
          live.set(r.id, router.backends.find((b) => b.name === res.headers[INSTANCE_HEADER])!.id);
          liveReasons.push(String(res.headers['x-prefix-router-decision']));
          liveCached += Number(/"cached_tokens":(\d+)/.exec(text)?.[1] ?? NaN);
          livePrompt += Number(/"prompt_tokens":(\d+)/.exec(text)?.[1] ?? NaN);
        }
      };
      await Promise.all([worker(0), worker(1), worker(2)]);
      // Load bookkeeping is back to zero once every request has ended.
      for (const b of router.backends)
        expect([b.inFlight, b.queuedPrefillTokens, b.decodeSequences]).toEqual([0, 0, 0]);
    } finally {
      await router.close();
    }
    const simulated = simulate({
      workload: concurrent,
      policy: { name: 'cache-aware' },
      seed: 42,
      instances: 3,
      instanceIds: router.backends.map((b) => b.id),
      profile: p5,
      modelName: fleet.instances[0].modelName,
    });
    expect(live.size).toBe(45);
    // Decisions that do not hinge on which of two near-simultaneous events came first are the same (the first
    // wave); a load tie decided differently by wall-clock jitter moves a group's prefix and the decisions after
    // it (measured: 19 to 45 of 45 agree on a busy machine), so the rest is compared in aggregate.
    const firstWave = simulated.records.filter((r) => r.sentAtMs === 0);
    expect(firstWave).toHaveLength(3);
    for (const r of firstWave) expect(live.get(r.id)).toBe(r.instance);
    // The share of decisions that were cache matches is the same within 15 points (live reasons from the header).
    const share = (reasons: string[]) => reasons.filter((x) => x === 'cache-match').length / reasons.length;
    expect(Math.abs(share(liveReasons) - share(simulated.records.map((r) => r.reason!)))).toBeLessThan(0.15);
    const simCached = simulated.records.reduce((n, r) => n + (r.cachedPromptTokens ?? 0), 0);
    const simPrompt = simulated.records.reduce((n, r) => n + (r.promptTokens ?? 0), 0);
    expect(Math.abs(liveCached / livePrompt - simCached / simPrompt)).toBeLessThan(0.1);
    expect(new Set(live.values()).size).toBeGreaterThan(1);
  });
});
