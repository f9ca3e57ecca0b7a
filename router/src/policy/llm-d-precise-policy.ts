import type { Rng } from '../common/seeded-rng';
import type { RoutingRequest } from '../protocol/routing-request';
import { definePolicy, KV_CACHE_TOKENS_OPTION } from './policy-definition';
import { engineCachedPromptTokens, type RoutingDecision, type RoutingSnapshot } from './routing-policy';
import { kvLoadPlan, type KvLoadCandidate, type KvLoadFacts } from './stages/kv-load-candidates';
import { kvUtilizationScorer } from './stages/kv-utilization-scorer';
import { precisePrefixScorer } from './stages/precise-prefix-scorer';
import { queueScorer } from './stages/queue-scorer';
import { softmaxPicker } from './stages/softmax-picker';
import { StagedPolicy } from './stages/staged-policy';

/** The options of `llm-d-precise`. */
export interface LlmDPreciseOptions {
  readonly prefixWeight: number;
  readonly kvUtilizationWeight: number;
  readonly queueWeight: number;
  readonly blockTokens: number;
  readonly kvCacheTokens: number;
}

/**
 * `llm-d-precise`: llm-d's inference scheduler with the profile `llm-d` runs (llm-d/llm-d-inference-scheduler
 * `deploy/config/epp-precise-prefix-cache-config.yaml`, commit 95f76e6, read 2026-12-06: prefix-cache 2.0,
 * kv-cache-utilization 1.0, queue 1.0, max-score picker, 64-token blocks as llm-d's guide pins `--block-size 64`), with
 * the precise prefix-cache scorer (stages/precise-prefix-scorer.ts: each pod's run of the prompt's blocks in its
 * engine's cache, min-max normalized among the holders). It reads each engine's blocks (RoutingPolicy.engineState
 * 'cached-blocks'): in the simulator the engine model's cache, which the simulator fills; in serve each engine's
 * account from its KV events (InstanceView.engineCache, `--kv-events` for every backend, else serve refuses it).
 *
 * The KV-usage and queue scorers read what `llm-d` reads (this router's requests in flight), so the two differ only
 * in the prefix scorer. Not modelled: speculative indexing (`speculativeIndexing`, off unless configured), which
 * adds a routed request's blocks before the engine's events confirm them; the simulator's engine state is exact at
 * each decision, so there is no event lag for it to cover.
 */
export class LlmDPrecisePolicy extends StagedPolicy<KvLoadCandidate, 'llm-d-max-score', KvLoadFacts> {
  readonly wantsKvCapacity = true;
  readonly engineState = 'cached-blocks';

  constructor(
    readonly options: LlmDPreciseOptions,
    rng: Rng,
  ) {
    super('llm-d-precise', {
      ...kvLoadPlan(options, undefined, { kind: 'engine-cache', policy: 'llm-d-precise' }),
      stages: [
        precisePrefixScorer(options.prefixWeight),
        kvUtilizationScorer(options.kvUtilizationWeight, options.blockTokens, options.kvCacheTokens),
        queueScorer<KvLoadCandidate>(options.queueWeight),
        softmaxPicker<KvLoadCandidate, 'llm-d-max-score'>(0, rng, 'llm-d-max-score', 'max-score'),
      ],
    });
  }

  /**
   * The choice, with the chosen engine's own account of the prompt as its predicted cached tokens: what serve reports
   * (x-prefix-router-predicted-cached-tokens) and reports compare with what the engine delivered. The scorers read
   * the same account in whole 64-token blocks; the prediction keeps the engine's own granularity.
   */
  override decide(request: RoutingRequest, snapshot: RoutingSnapshot): RoutingDecision<'llm-d-max-score'> {
    const decision = super.decide(request, snapshot);
    const chosen = snapshot.instances.find((view) => view.id === decision.instance);
    if (chosen === undefined) return decision;
    return { ...decision, predictedCachedTokens: engineCachedPromptTokens(chosen, request, this.name) };
  }
}

export const llmDPreciseDefinition = definePolicy({
  name: 'llm-d-precise',
  description:
    "llm-d's default profile with the precise prefix-cache scorer (precise_prefix_cache.go, read 2026-12-06): 2 × each engine's cached run of the prompt, min-max normalized among holders + 1 × (1 − KV usage) + 1 × normalized queue; reads the engines' caches (the simulator's engine models; serve: their KV events, --kv-events for every backend)",
  reasons: ['llm-d-max-score'],
  stages: [
    { kind: 'filter', name: 'serves-model' },
    { kind: 'filter', name: 'healthy' },
    { kind: 'candidates', name: 'engine-kv-load' },
    { kind: 'scorer', name: 'precise-prefix-cache', weight: 2 },
    { kind: 'scorer', name: 'kv-cache-utilization', weight: 1 },
    { kind: 'scorer', name: 'queue', weight: 1 },
    { kind: 'picker', name: 'max-score' },
  ],
  options: [KV_CACHE_TOKENS_OPTION],
  engineState: 'cached-blocks',
  create: (o, deps) =>
    new LlmDPrecisePolicy(
      { prefixWeight: 2, kvUtilizationWeight: 1, queueWeight: 1, blockTokens: 64, kvCacheTokens: o.kvCacheTokens },
      deps.rng,
    ),
});
