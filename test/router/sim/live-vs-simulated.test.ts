import { request } from 'undici';
import { startEmulatorFleet, type RunningEmulatorFleet } from '../../../router/src/emulator/emulator-server';
import { builtinProfile } from '../../../router/src/emulator/engine-profile';
import type { PolicyConfig } from '../../../router/src/policy';
import { INSTANCE_HEADER, startRouter } from '../../../router/src/server';
import { simulate } from '../../../router/src/sim/simulator';
import { openAiPath, parseWorkloadSpec, toOpenAiBody, type Workload } from '../../../router/src/sim/workload';

/**
 * The simulator's claim to fame: it drives the same policy objects as the live router, so on the same workload
 * and seed both make the same decisions. Live: a real router in front of emulated vLLM instances on loopback,
 * requests sent one at a time over HTTP. Simulated: the same workload and policy in virtual time.
 */
const tiny = builtinProfile('tiny');
// Groups of 4 share a 300-token prefix (longer than prefixLength 1024 characters); suffixes make every prompt unique.
const workload: Workload = parseWorkloadSpec('long-context?groups=5&prefixTokens=300&suffixTokens=10..60&outputTokens=3&count=40&seed=11&concurrency=1');

const policies: PolicyConfig[] = [
  { name: 'sagemaker-prefix-aware', prefixLength: 1024, concurrencyThreshold: 4 },
  { name: 'random' },
  { name: 'round-robin' },
  { name: 'least-outstanding-requests' },
];

describe('when the same seeded workload runs live and simulated', () => {
  let fleet: RunningEmulatorFleet;

  beforeAll(async () => {
    fleet = await startEmulatorFleet(3, { profile: tiny, timeScale: 20 });
  });

  afterAll(async () => {
    await fleet.close();
  });

  test.each(policies.map((p) => [p.name, p] as const))('GIVEN %s THEN the live router and the simulator choose the same instance for every request', async (_name, policy) => {
    const router = await startRouter({
      backends: fleet.urls,
      policy,
      seed: 42,
      port: 0,
      logLevel: 'silent',
      healthCheck: { intervalMs: 60_000 },
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
        live.push(String(res.headers[INSTANCE_HEADER]));
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
    });
    const simulatedOrder = [...simulated.records].sort((a, b) => a.sentAtMs - b.sentAtMs).map((r) => r.instance);

    expect(live).toHaveLength(40);
    expect(simulatedOrder).toEqual(live);
    // Not a degenerate pass: requests were spread over more than one instance.
    expect(new Set(live).size).toBeGreaterThan(1);
  });
});
