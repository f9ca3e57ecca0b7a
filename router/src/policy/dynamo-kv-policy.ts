import type { Rng } from '../common/seeded-rng';
import type { StateHashKey } from '../state/state-hash-key';
import { definePolicy, KV_CACHE_TOKENS_OPTION } from './policy-definition';
import { dynamoCostScorer } from './stages/dynamo-cost-scorer';
import { kvLoadPlan, type KvLoadCandidate, type KvLoadFacts } from './stages/kv-load-candidates';
import { softmaxPicker } from './stages/softmax-picker';
import { StagedPolicy } from './stages/staged-policy';

/** The options of `dynamo-kv`, named after Dynamo's router flags. */
export interface DynamoKvOptions {
  readonly overlapScoreCredit: number;
  readonly prefillLoadScale: number;
  readonly routerTemperature: number;
  readonly blockTokens: number;
  readonly kvCacheTokens: number;
}

/**
 * `dynamo-kv`: NVIDIA Dynamo's KV router as its "Routing Concepts" page defines the cost (docs.nvidia.com/dynamo,
 * dev/components/router/routing-concepts and configuration-and-tuning, read 2026-12-06):
 *
 *   cost = prefill_load_scale × max(active prefill blocks + prompt blocks − kv_overlap_score_credit × overlap, 0)
 *          + active decode blocks + the request's blocks
 *
 * lowest cost wins; `router_temperature` 0 (the default) is deterministic, above 0 a softmax draw over normalized
 * costs. Defaults: credit 1, prefill-load scale 1, temperature 0, block size 16 tokens (vLLM's default; Dynamo takes
 * the backend's). Earlier releases documented `cost = overlap_score_weight × prefill_blocks + decode_blocks`; with
 * credit 1 and scale 1 the current form reduces to the same ordering for an idle worker.
 *
 * Assumed where the docs leave it open: the overlap is this router's record of what it sent each worker (Dynamo's
 * `--no-kv-events` approximation, here an LRU sized by each worker's KV capacity rather than Dynamo's TTL; with KV
 * events Dynamo knows the engines' blocks, which needs the engine event feed this router does not read yet); active
 * prefill is the caller's queued prefill tokens; active decode blocks are the prompts of the requests in flight,
 * counted by this router from dispatch to release (Dynamo also grows them as tokens are generated); exact cost ties
 * are broken uniformly at random (seeded); the normalization at temperature > 0 is min-max over the candidates.
 */
export class DynamoKvPolicy extends StagedPolicy<KvLoadCandidate, 'dynamo-lowest-cost', KvLoadFacts> {
  readonly wantsKvCapacity = true;

  constructor(
    readonly options: DynamoKvOptions,
    rng: Rng,
    stateHashKey?: StateHashKey,
  ) {
    super('dynamo-kv', {
      ...kvLoadPlan(options, stateHashKey),
      stages: [
        dynamoCostScorer(options),
        softmaxPicker<KvLoadCandidate, 'dynamo-lowest-cost'>(options.routerTemperature, rng, 'dynamo-lowest-cost'),
      ],
    });
  }
}

export const dynamoKvDefinition = definePolicy({
  name: 'dynamo-kv',
  description:
    "NVIDIA Dynamo's KV router (docs.nvidia.com/dynamo routing concepts, read 2026-12-06): lowest prefill_load_scale × max(queued + prompt blocks − credit × overlap, 0) + active decode blocks; temperature 0 = deterministic",
  reasons: ['dynamo-lowest-cost'],
  stages: [
    { kind: 'filter', name: 'serves-model' },
    { kind: 'filter', name: 'healthy' },
    { kind: 'candidates', name: 'kv-load' },
    { kind: 'scorer', name: 'dynamo-kv-cost', weight: 1 },
    { kind: 'picker', name: 'softmax' },
  ],
  options: [
    {
      name: 'overlapScoreCredit',
      type: 'number',
      min: 0,
      max: 1,
      default: 1,
      valueName: 'x',
      doc: "share of the overlap credited against prefill (Dynamo's --router-kv-overlap-score-credit, default 1)",
    },
    {
      name: 'prefillLoadScale',
      type: 'number',
      min: 0,
      max: 1000,
      default: 1,
      valueName: 'x',
      doc: "weight of the prefill blocks against the decode blocks (Dynamo's --router-prefill-load-scale, default 1)",
    },
    {
      name: 'routerTemperature',
      type: 'number',
      min: 0,
      max: 100,
      default: 0,
      valueName: 'x',
      doc: "0 picks the lowest cost; above 0 a softmax draw over normalized costs (Dynamo's --router-temperature, default 0)",
    },
    {
      name: 'blockTokens',
      type: 'integer',
      min: 1,
      max: 4096,
      default: 16,
      valueName: 'tokens',
      doc: "KV block size (Dynamo's --kv-cache-block-size takes the backend's; vLLM's default is 16)",
    },
    KV_CACHE_TOKENS_OPTION,
  ],
  create: (o, deps) =>
    new DynamoKvPolicy(
      {
        overlapScoreCredit: o.overlapScoreCredit,
        prefillLoadScale: o.prefillLoadScale,
        routerTemperature: o.routerTemperature,
        blockTokens: o.blockTokens,
        kvCacheTokens: o.kvCacheTokens,
      },
      deps.rng,
      deps.stateHashKey,
    ),
});
