import type { Rng } from '../common/seeded-rng';
import type { StateHashKey } from '../state/state-hash-key';
import { definePolicy, KV_CACHE_TOKENS_OPTION } from './policy-definition';
import { kvLoadPlan, type KvLoadCandidate, type KvLoadFacts } from './stages/kv-load-candidates';
import { kvUtilizationScorer } from './stages/kv-utilization-scorer';
import { prefixMatchScorer } from './stages/prefix-match-scorer';
import { queueScorer } from './stages/queue-scorer';
import { softmaxPicker } from './stages/softmax-picker';
import { StagedPolicy } from './stages/staged-policy';

/** The options of `llm-d`. */
export interface LlmDOptions {
  readonly prefixWeight: number;
  readonly kvUtilizationWeight: number;
  readonly queueWeight: number;
  readonly blockTokens: number;
  readonly maxPrefixBlocksToMatch: number;
  readonly kvCacheTokens: number;
}

/**
 * `llm-d`: llm-d's inference scheduler with its default scheduling profile's scorers and weights
 * (llm-d/llm-d-inference-scheduler `deploy/config/epp-precise-prefix-cache-config.yaml`, commit 95f76e6, read
 * 2026-12-06: prefix-cache 2.0, kv-cache-utilization 1.0, queue 1.0, max-score picker, 64-token blocks), with the
 * prefix-cache scorer in approximate mode (Gateway API Inference Extension's prefix plugin: a router-side block
 * index per pod, `maxPrefixBlocksToMatch` 256): each pod's score is 2 × its matched share of the prompt's blocks
 * + 1 × (1 − KV usage) + 1 × its min-max normalized queue (fewest waiting = 1); the highest wins, ties at random.
 *
 * Assumed where the view lacks the pod's own metrics: KV usage is the blocks of this router's requests in flight
 * there over the pod's KV capacity; waiting requests are those in flight without a first token; the per-pod
 * index is this router's record of what it sent (PrefixMemory, sized by the pod's KV capacity where llm-d uses
 * `lruCapacityPerServer`). The precise mode (engine KV events) is `llm-d-precise`.
 */
export class LlmDPolicy extends StagedPolicy<KvLoadCandidate, 'llm-d-max-score', KvLoadFacts> {
  readonly wantsKvCapacity = true;

  constructor(
    readonly options: LlmDOptions,
    rng: Rng,
    stateHashKey?: StateHashKey,
  ) {
    super('llm-d', {
      ...kvLoadPlan(options, stateHashKey),
      stages: [
        prefixMatchScorer(options.prefixWeight, options.maxPrefixBlocksToMatch),
        kvUtilizationScorer(options.kvUtilizationWeight, options.blockTokens, options.kvCacheTokens),
        queueScorer<KvLoadCandidate>(options.queueWeight),
        softmaxPicker<KvLoadCandidate, 'llm-d-max-score'>(0, rng, 'llm-d-max-score', 'max-score'),
      ],
    });
  }
}

export const llmDDefinition = definePolicy({
  name: 'llm-d',
  description:
    "llm-d inference scheduler's default profile (epp-precise-prefix-cache-config.yaml, read 2026-12-06) with the approximate prefix-cache scorer: 2 × matched share of the prompt + 1 × (1 − KV usage) + 1 × normalized queue; max score wins",
  reasons: ['llm-d-max-score'],
  stages: [
    { kind: 'filter', name: 'serves-model' },
    { kind: 'filter', name: 'healthy' },
    { kind: 'candidates', name: 'kv-load' },
    { kind: 'scorer', name: 'prefix-cache', weight: 2 },
    { kind: 'scorer', name: 'kv-cache-utilization', weight: 1 },
    { kind: 'scorer', name: 'queue', weight: 1 },
    { kind: 'picker', name: 'max-score' },
  ],
  options: [
    {
      name: 'maxPrefixBlocksToMatch',
      type: 'integer',
      min: 1,
      max: 1_000_000,
      default: 256,
      valueName: 'n',
      doc: "prompt blocks the prefix scorer considers (the prefix plugin's maxPrefixBlocksToMatch, default 256)",
    },
    KV_CACHE_TOKENS_OPTION,
  ],
  create: (o, deps) =>
    new LlmDPolicy(
      {
        prefixWeight: 2,
        kvUtilizationWeight: 1,
        queueWeight: 1,
        blockTokens: 64,
        maxPrefixBlocksToMatch: o.maxPrefixBlocksToMatch,
        kvCacheTokens: o.kvCacheTokens,
      },
      deps.rng,
      deps.stateHashKey,
    ),
});
