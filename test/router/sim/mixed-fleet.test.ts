import {
  builtinProfile,
  prefillTokensPerSecond,
  type EngineProfile,
} from '../../../router/src/emulator/engine-profile';
import type { PolicyConfig } from '../../../router/src/policy';
import { percentile, prefillWorkByInstance, workShareOverCapacityShare } from '../../../router/src/report';
import { simulate, type SimulationConfig } from '../../../router/src/sim/simulator';
import { parseWorkloadSpec } from '../../../router/src/workload';

/**
 * A fleet SageMaker InstancePools can create for Llama 3.1 70B when p5 capacity is short: 5 × p5 + 2 × p4d (the
 * slowest fallback type), each p4d prefilling about 3× slower (router/profiles/p4d-llama-3.1-70b.json).
 */
const p5 = builtinProfile('p5-llama-3.1-70b');
const p4d = builtinProfile('p4d-llama-3.1-70b');
const FLEET: readonly EngineProfile[] = [p5, p5, p5, p5, p5, p4d, p4d];
const SLOW = [5, 6];
const capacity = FLEET.map(prefillTokensPerSecond);
// 4,000-token prompts, nearly all cold (5,000 groups): 4,000 × rate prefill tokens per second.
const workloadAt = (rate: number) =>
  parseWorkloadSpec(
    `long-context?groups=5000&prefixTokens=3000&suffixTokens=1000&outputTokens=16&rate=${rate}&duration=30&seed=3`,
  );
const fleetCapacity = capacity.reduce((a, b) => a + b, 0);

function run(rate: number, policy: PolicyConfig, prefillSpeeds: SimulationConfig['prefillSpeeds']) {
  const result = simulate({
    workload: workloadAt(rate),
    policy,
    instances: FLEET.length,
    profile: p5,
    profiles: FLEET,
    prefillSpeeds,
  });
  const shares = workShareOverCapacityShare(prefillWorkByInstance(result.records, result.instanceIds), capacity);
  const ttfts = result.records.map((r) => r.ttftMs).filter((t): t is number => t !== null);
  return { shares, p90: percentile(ttfts, 90)!, result };
}

describe('when cache-aware routes a mixed fleet in simulation', () => {
  test('GIVEN the profiles THEN a p4d prefills about a third as fast as a p5 (what the shares are measured against)', () => {
    expect(capacity[SLOW[0]] / capacity[0]).toBeGreaterThan(0.28);
    expect(capacity[SLOW[0]] / capacity[0]).toBeLessThan(0.36);
  });

  test.each(['profile', 'learned'] as const)(
    'GIVEN more prefill than the fleet can do (%s speeds) THEN every instance does prefill work within ±25 %% of its share of the capacity',
    (speeds) => {
      // 40 req/s × 4,000 tokens = 160,000 tokens/s against the fleet's ~115,000.
      expect(40 * 4000).toBeGreaterThan(fleetCapacity);
      const { shares } = run(40, { name: 'cache-aware' }, speeds);
      for (const s of shares) {
        expect(s).toBeGreaterThanOrEqual(0.75);
        expect(s).toBeLessThanOrEqual(1.25);
      }
    },
  );

  test.each(['profile', 'learned'] as const)(
    'GIVEN a light load (a third of the capacity, %s speeds) THEN a p4d still gets new prompts, about its capacity share and less than blind to speed, and P90 is no worse than blind',
    (speeds) => {
      // Nearly every prompt is cold: cold placement by where a prompt starts and weighted rendezvous give each
      // instance new prefix groups in proportion to its speed, not only once the p5 queues are long. About 17 of
      // the ~300 prompts per p4d at its exact share, so its measured share varies by about ±25 % (binomial): the
      // bounds are "not starved" and "below what hashing blind to speed gives".
      const aware = run(10, { name: 'cache-aware' }, speeds);
      const blind = run(10, { name: 'cache-aware' }, 'none');
      for (const i of SLOW) {
        expect(aware.shares[i]).toBeGreaterThanOrEqual(0.75);
        expect(aware.shares[i]).toBeLessThan(blind.shares[i]);
      }
      for (const [i, s] of aware.shares.entries()) {
        if (SLOW.includes(i)) continue;
        expect(s).toBeGreaterThanOrEqual(0.75);
        expect(s).toBeLessThanOrEqual(1.25);
      }
      // Blind to speed, it spreads by tokens and requests as if every instance were a p5: more than their share.
      for (const i of SLOW) expect(blind.shares[i]).toBeGreaterThan(1.25);
      // The price of using the p4d at light load: its cold prompts take its slower prefill (P90 is a p4d's TTFT),
      // never more than blind to speed, which sends it more.
      expect(aware.p90).toBeLessThanOrEqual(blind.p90);
    },
  );

  test('GIVEN sagemaker-prefix-aware THEN the hash gives a p4d more than its capacity share (blind to speed)', () => {
    const { shares } = run(
      10,
      { name: 'sagemaker-prefix-aware', prefixLength: 1024, concurrencyThreshold: 32 },
      'profile',
    );
    for (const i of SLOW) expect(shares[i]).toBeGreaterThan(1.25);
  });

  test('GIVEN a fleet of one type THEN giving the routers profile speeds changes no decision (every slowdown is exactly 1)', () => {
    const homogeneous = {
      workload: workloadAt(20),
      policy: { name: 'cache-aware' } as PolicyConfig,
      instances: 4,
      profile: p5,
    };
    const withSpeeds = simulate({ ...homogeneous, prefillSpeeds: 'profile' });
    const without = simulate({ ...homogeneous, prefillSpeeds: 'none' });
    expect(withSpeeds.records.map((r) => r.instance)).toEqual(without.records.map((r) => r.instance));
  });

  test('GIVEN profiles that do not match the instances THEN the simulator refuses them', () => {
    expect(() =>
      simulate({ workload: workloadAt(1), policy: { name: 'random' }, instances: 3, profile: p5, profiles: [p5, p4d] }),
    ).toThrow(/profiles must list 3 profiles/);
    const otherBlocks: EngineProfile = {
      ...p5,
      name: 'blocks-32',
      blockTokens: 32,
      kvCapacityBlocks: p5.kvCapacityBlocks / 2,
    };
    expect(() =>
      simulate({
        workload: workloadAt(1),
        policy: { name: 'random' },
        instances: 2,
        profile: p5,
        profiles: [p5, otherBlocks],
      }),
    ).toThrow(/blockTokens/);
  });
});
