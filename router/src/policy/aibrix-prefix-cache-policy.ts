import type { Rng } from '../common/seeded-rng';
import { definePolicy } from './policy-definition';
import { memoizedUnkeyedRoutingBlockHashes } from './routing-blocks';
import { aibrixImbalancePicker } from './stages/aibrix-imbalance-picker';
import { aibrixLeastRequestPicker } from './stages/aibrix-least-request-picker';
import { aibrixPrefixMatchPicker } from './stages/aibrix-prefix-match-picker';
import { AibrixPrefixTable, type AibrixCandidate, type AibrixFacts } from './stages/aibrix-prefix-table';
import { HEALTHY_FILTER } from './stages/healthy-filter';
import { SERVES_MODEL_FILTER } from './stages/serves-model-filter';
import { StagedPolicy } from './stages/staged-policy';

/** The options of `aibrix-prefix-cache`, named after AIBrix's AIBRIX_PREFIX_CACHE_* variables. */
export interface AibrixPrefixCacheOptions {
  readonly blockChars: number;
  readonly maxBlocks: number;
  readonly blockTtlMins: number;
  readonly imbalanceAbsCount: number;
  readonly stdDevFactor: number;
}

type AibrixReason = 'aibrix-imbalance' | 'aibrix-prefix-match' | 'aibrix-least-request';

/**
 * `aibrix-prefix-cache`: AIBrix's `prefix-cache` routing algorithm, as vllm-project/aibrix
 * `pkg/plugins/gateway/algorithms/prefix_cache.go` (commit 429c45e) and `pkg/utils/prefixcacheindexer/hash.go`
 * (commit 49e51f5) implement it (read 2026-12-06), with their defaults:
 *
 * - the imbalance guard first: when the most and the least loaded pods (requests in flight) differ by more than
 *   8, a random least-loaded pod, cache ignored (the prompt is still recorded for it);
 * - otherwise match, then load: chained hashes of 4-token blocks (the default character tokenizer: 4 characters)
 *   in an LRU table of 200,000 blocks that expire 20 minutes after their last write; the pods holding the longest
 *   match, by match percent then fewest requests in flight (random among equals), and the first whose load is at
 *   most the mean + 1 × the standard deviation of all pods' loads;
 * - no match, or none within that bound: a least-loaded pod.
 *
 * Assumed: block hashes chain the engine model's fast 53-bit hash over `blockChars`-character blocks of the
 * routing text, seeded by model, tenant and cache scope (routing-blocks.ts memoizedUnkeyedRoutingBlockHashes);
 * AIBrix chains xxhash64 under a random per-process seed over 8 bytes of the parent hash and the block
 * (`getPrefixHashes`, hash.go at commit 0871c21, read 2026-12-06). Either is a fast non-cryptographic hash and
 * only equal hashes matter, never their values; the table is never published, so it needs no keyed MAC. A match
 * does not refresh a block's recency (AIBrix's LRU get may); the standard deviation is the population one; ties
 * among least-loaded pods are broken uniformly at random (seeded). The issue's summary of an older AIBrix
 * (max > 2 × (mean + 1) and max − min ≥ 8) is not what this commit does.
 */
export class AibrixPrefixCachePolicy extends StagedPolicy<AibrixCandidate, AibrixReason, AibrixFacts> {
  constructor(
    readonly options: AibrixPrefixCacheOptions,
    rng: Rng,
  ) {
    const hashesOf = memoizedUnkeyedRoutingBlockHashes(options.blockChars);
    super('aibrix-prefix-cache', {
      factsOf: (request, snapshot) => ({ request, snapshot, hashes: hashesOf(request) }),
      instanceFilters: [SERVES_MODEL_FILTER, HEALTHY_FILTER],
      candidates: new AibrixPrefixTable(
        { maxBlocks: options.maxBlocks, blockTtlMs: options.blockTtlMins * 60_000 },
        hashesOf,
      ),
      stages: [
        aibrixImbalancePicker(options.imbalanceAbsCount, rng),
        aibrixPrefixMatchPicker(options.stdDevFactor, rng),
        aibrixLeastRequestPicker(rng),
      ],
    });
  }
}

export const aibrixPrefixCacheDefinition = definePolicy({
  name: 'aibrix-prefix-cache',
  description:
    "AIBrix's prefix-cache (gateway algorithms/prefix_cache.go, read 2026-12-06): imbalance guard (max − min in flight > 8 → a least-loaded pod), else the best prefix match whose load is within mean + 1 σ, else the least loaded",
  reasons: ['aibrix-imbalance', 'aibrix-prefix-match', 'aibrix-least-request'],
  stages: [
    { kind: 'filter', name: 'serves-model' },
    { kind: 'filter', name: 'healthy' },
    { kind: 'candidates', name: 'aibrix-prefix-table' },
    { kind: 'picker', name: 'aibrix-imbalance' },
    { kind: 'picker', name: 'aibrix-prefix-match' },
    { kind: 'picker', name: 'aibrix-least-request' },
  ],
  options: [
    {
      name: 'prefixBlockChars',
      type: 'integer',
      min: 1,
      max: 65_536,
      default: 4,
      valueName: 'chars',
      doc: 'characters per prefix block (AIBRIX_PREFIX_CACHE_BLOCK_SIZE, 4 tokens of the default character tokenizer)',
    },
    {
      name: 'prefixCacheBlockNumber',
      type: 'integer',
      min: 1,
      max: 100_000_000,
      default: 200_000,
      valueName: 'n',
      doc: 'blocks the table keeps, least recently written dropped first (AIBRIX_PREFIX_CACHE_BLOCK_NUMBER, default 200000)',
    },
    {
      name: 'evictionDurationMins',
      type: 'integer',
      min: 1,
      max: 10_080,
      default: 20,
      valueName: 'min',
      doc: 'minutes a block lives after its last write (AIBRIX_PREFIX_CACHE_EVICTION_DURATION_MINS, default 20)',
    },
    {
      name: 'imbalanceAbsCount',
      type: 'integer',
      min: 0,
      max: 1_000_000,
      default: 8,
      valueName: 'n',
      doc: 'max − min requests in flight above which the cache is ignored (AIBRIX_PREFIX_CACHE_POD_RUNNING_REQUEST_IMBALANCE_ABS_COUNT, default 8)',
    },
    {
      name: 'standardDeviationFactor',
      type: 'integer',
      min: 0,
      max: 1000,
      default: 1,
      valueName: 'n',
      doc: 'a matched pod is taken only with load ≤ mean + this × σ (AIBRIX_PREFIX_CACHE_STANDARD_DEVIATION_FACTOR, default 1)',
    },
  ],
  create: (o, deps) =>
    new AibrixPrefixCachePolicy(
      {
        blockChars: o.prefixBlockChars,
        maxBlocks: o.prefixCacheBlockNumber,
        blockTtlMins: o.evictionDurationMins,
        imbalanceAbsCount: o.imbalanceAbsCount,
        stdDevFactor: o.standardDeviationFactor,
      },
      deps.rng,
    ),
});
