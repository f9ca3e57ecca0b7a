import { createHash } from 'node:crypto';
import { builtinProfile, type EngineProfile } from '../../../router/src/emulator/engine-profile';
import type { PolicyConfig } from '../../../router/src/policy';
import { compareStrategies } from '../../../router/src/sim/compare-strategies';
import { parseWorkloadSpec } from '../../../router/src/workload';

/**
 * Seeded simulations whose full results (every request record except the wall-clock decision time, every
 * engine's counters, the ceilings, the measured window) are pinned by digest in
 * fixtures/seeded-results.json. The digests were recorded from main's simulator without issue 14's changes
 * (compact structures, the event loop): first at 90e6515, then — after issue 12 added decision reasons to the
 * report — at main 16:22 (the results digests did not change; the report digests did, by issue 12's new
 * fields), and again from main at 16:38 (issue 9 and cache-aware changes moved some results). Each time,
 * issue 14's code gave the same digests as main's. Any change of behaviour, however small, changes a digest.
 *
 * The scenarios make the compact structures work hard: KV caches far smaller than the prefixes in play
 * (evictions, preemptions), a fleet-ceiling LRU that evicts, a closed loop, and every policy.
 */
export interface SeededScenario {
  readonly name: string;
  readonly workload: string;
  readonly instances: number;
  readonly profile: EngineProfile;
  readonly policies: readonly PolicyConfig[];
  readonly warmupMs?: number;
  readonly seed?: number;
}

const tiny = builtinProfile('tiny');
const p5 = builtinProfile('p5-llama-3.1-70b');
// The p5 step-time model with a KV cache of 2,000 blocks (32,000 tokens), so a few long prompts fill it.
const p5Small: EngineProfile = { ...p5, name: 'p5-small-kv', kvCapacityBlocks: 2000 };

const allPolicies: readonly PolicyConfig[] = [
  { name: 'random' },
  { name: 'least-outstanding-requests' },
  { name: 'round-robin' },
  { name: 'sagemaker-prefix-aware', prefixLength: 1024, concurrencyThreshold: 4 },
  { name: 'cache-aware' },
];

export const SEEDED_SCENARIOS: readonly SeededScenario[] = [
  {
    name: 'tiny-long-context',
    workload:
      'long-context?groups=12&prefixTokens=300&suffixTokens=20..200&outputTokens=4..40&rate=60&count=300&seed=5',
    instances: 4,
    profile: tiny,
    policies: allPolicies,
    warmupMs: 500,
    seed: 3,
  },
  {
    name: 'tiny-short-chat-closed-loop',
    workload:
      'short-chat?systemPrompts=3&systemTokens=100..300&userTokens=10..60&outputTokens=8..40&turns=2..5&maxContextTokens=1000&concurrency=6&count=160&seed=2',
    instances: 3,
    profile: tiny,
    policies: allPolicies,
    seed: 9,
  },
  {
    // Sparse arrivals: finishes fall between them, so the first event after the warm-up is often a finish
    // (the engines' warm-up snapshot must see exactly the steps before it).
    name: 'p5-small-kv-sparse-warmup',
    workload:
      'long-context?groups=30&prefixTokens=2000&suffixTokens=100..300&outputTokens=32..96&rate=3&count=90&seed=21',
    instances: 3,
    profile: p5Small,
    policies: [
      { name: 'random' },
      { name: 'sagemaker-prefix-aware', prefixLength: 1024, concurrencyThreshold: 2 },
      { name: 'cache-aware' },
    ],
    warmupMs: 7_000,
    seed: 2,
  },
  {
    name: 'p5-small-kv-long-context',
    workload:
      'long-context?groups=24&prefixTokens=3000&suffixTokens=200..900&outputTokens=16..128&rate=25&count=240&seed=11',
    instances: 5,
    profile: p5Small,
    policies: allPolicies,
    seed: 1,
  },
];

/** Digest of everything a scenario's runs produce, bar wall-clock times. */
export interface SeededDigests {
  /** Over the simulator's raw results: records, engine counters, windows. */
  readonly results: string;
  /** Over the built report (wall-clock figures and the creation time left out). */
  readonly report: string;
  readonly requests: number;
  readonly hitRates: Record<string, number>;
  /** Σ over runs and engines: evicted blocks and preemptions (the scenario must exercise both paths). */
  readonly evictions: number;
  readonly preemptions: number;
}

const WALL_CLOCK_KEYS = new Set(['createdAt', 'simulation wall time (s)', 'decisionMicros']);

export function seededDigests(scenario: SeededScenario, options: { promptWorker?: boolean } = {}): SeededDigests {
  const { results, report } = compareStrategies({
    promptWorker: options.promptWorker,
    workload: parseWorkloadSpec(scenario.workload),
    policies: scenario.policies,
    instances: scenario.instances,
    profile: scenario.profile,
    seed: scenario.seed,
    warmupMs: scenario.warmupMs,
  });
  const hash = createHash('sha256');
  const hitRates: Record<string, number> = {};
  let requests = 0;
  let evictions = 0;
  let preemptions = 0;
  for (const r of results) {
    requests += r.records.length;
    for (const rec of r.records) {
      hash.update(
        JSON.stringify([
          rec.id,
          rec.instance,
          rec.sentAtMs,
          rec.ttftMs,
          rec.e2eMs,
          rec.promptTokens,
          rec.cachedPromptTokens,
          rec.outputTokens,
          rec.error ?? null,
        ]),
      );
    }
    hash.update(
      JSON.stringify(
        r.engines.map((e) => [
          e.clockMs,
          e.evictedBlocks,
          e.cachedBlocks,
          e.usedBlocks,
          e.prefixCacheHitTokens,
          e.prefixCacheQueryTokens,
          e.preemptions,
          e.steps,
          e.fastForwardedSteps,
          e.busyMs,
          e.finished,
        ]),
      ),
    );
    hash.update(JSON.stringify([r.window, r.prometheus, r.simulatedMs]));
    for (const e of r.engines) {
      evictions += e.evictedBlocks;
      preemptions += e.preemptions;
    }
    let cached = 0;
    let prompt = 0;
    for (const rec of r.records) {
      cached += rec.cachedPromptTokens ?? 0;
      prompt += rec.promptTokens ?? 0;
    }
    hitRates[r.policy.name] = Math.round((cached / prompt) * 1e6) / 1e6;
  }
  const reportText = JSON.stringify(report, (key, value: unknown) => (WALL_CLOCK_KEYS.has(key) ? undefined : value));
  return {
    results: hash.digest('hex'),
    report: createHash('sha256').update(reportText).digest('hex'),
    requests,
    hitRates,
    evictions,
    preemptions,
  };
}
