import type { Rng } from '../common/seeded-rng';
import { processStateHashKey, type StateHashKey } from '../state/state-hash-key';
import { definePolicy } from './policy-definition';
import { memoizedRoutingBlockHashes, routedText } from './routing-blocks';
import { HEALTHY_FILTER } from './stages/healthy-filter';
import { SERVES_MODEL_FILTER } from './stages/serves-model-filter';
import { smgCacheHitPicker } from './stages/smg-cache-hit-picker';
import { smgMinLoadPicker } from './stages/smg-min-load-picker';
import { SmgPrefixTree } from './stages/smg-prefix-tree';
import { SmgTreeCandidates, type SmgCandidate, type SmgFacts } from './stages/smg-tree-candidates';
import { StagedPolicy } from './stages/staged-policy';

/** The options of `smg-cache-aware`, named after the gateway's. */
export interface SmgCacheAwareOptions {
  readonly cacheThreshold: number;
  readonly balanceAbsThreshold: number;
  readonly balanceRelThreshold: number;
  readonly evictionIntervalSecs: number;
  readonly maxTreeSize: number;
  readonly matchBlockChars: number;
}

type SmgReason = 'smg-cache-hit' | 'smg-spill' | 'smg-min-load';

/**
 * `smg-cache-aware`: SGLang Model Gateway's `cache_aware` policy on its HTTP path (text requests, no KV events),
 * as smg-project/smg `model_gateway/src/policies/cache_aware.rs` (commit 56ad201, read 2026-12-06) implements it:
 *
 * - a per-model approximate radix tree of the text each worker was sent (here over `matchBlockChars`-character
 *   routing blocks instead of characters, so a match is exact to within one block);
 * - match rate = matched characters ÷ request characters; above `cache_threshold` the request goes to the
 *   least-loaded worker holding the longest match (ties at random: `select_matched_candidate`), at or below it to
 *   the least-loaded worker (in flight, then requests sent: `min_load_idx`);
 * - the per-request spill gate (`gate_selected_candidate`): a matched worker whose load exceeds both
 *   `balance_rel_threshold` × the healthy workers' mean and the mean + `balance_abs_threshold` sends the request to
 *   the least-loaded worker instead; either way the prompt is inserted for the worker chosen;
 * - every `eviction_interval_secs` the tree is cut back by LRU to `max_tree_size` characters per model.
 *
 * Defaults are the gateway's command-line defaults (cache_threshold 0.3, balance_abs_threshold 64,
 * balance_rel_threshold 1.5, eviction_interval 120 s, max_tree_size 2^26; the library's `CacheAwareConfig::default()`
 * has 0.5 / 32 / 1.1 / 30 s / 10,000). Assumed where the source is silent for this setting: the longest match is
 * taken over the candidates (the gateway takes it over every worker of the tree and falls back to the first healthy
 * worker when no holder is healthy), and a match does not refresh the tree's recency (the gateway touches nodes
 * on insert; the chosen worker's path is inserted on every decision either way). Older sgl-router releases sent a
 * below-threshold request to the worker with the smallest tree and balanced fleet-wide; the current gateway does
 * neither, so neither is modelled.
 */
export class SmgCacheAwarePolicy extends StagedPolicy<SmgCandidate, SmgReason, SmgFacts> {
  constructor(
    readonly options: SmgCacheAwareOptions,
    rng: Rng,
    stateHashKey: StateHashKey = processStateHashKey(),
  ) {
    const hashesOf = memoizedRoutingBlockHashes(options.matchBlockChars, stateHashKey);
    super('smg-cache-aware', {
      factsOf: (request, snapshot) => ({
        request,
        snapshot,
        hashes: hashesOf(request),
        textChars: routedText(request).length,
      }),
      instanceFilters: [SERVES_MODEL_FILTER, HEALTHY_FILTER],
      candidates: new SmgTreeCandidates(
        new SmgPrefixTree(options.matchBlockChars),
        {
          blockChars: options.matchBlockChars,
          evictionIntervalMs: options.evictionIntervalSecs * 1000,
          maxTreeChars: options.maxTreeSize,
        },
        hashesOf,
      ),
      stages: [
        smgCacheHitPicker(options, rng, { hit: 'smg-cache-hit', spill: 'smg-spill' }),
        smgMinLoadPicker('smg-min-load'),
      ],
    });
  }
}

export const smgCacheAwareDefinition = definePolicy({
  name: 'smg-cache-aware',
  description:
    "SGLang Model Gateway's cache_aware (smg-project/smg, read 2026-12-06): per-model tree of what each worker was sent; match rate > cacheThreshold → least-loaded holder of the longest match, spilled to the least loaded when over both balance thresholds; otherwise the least loaded",
  reasons: ['smg-cache-hit', 'smg-spill', 'smg-min-load'],
  stages: [
    { kind: 'filter', name: 'serves-model' },
    { kind: 'filter', name: 'healthy' },
    { kind: 'candidates', name: 'smg-prefix-tree' },
    { kind: 'picker', name: 'smg-cache-hit' },
    { kind: 'picker', name: 'smg-min-load' },
  ],
  options: [
    {
      name: 'cacheThreshold',
      type: 'number',
      min: 0,
      max: 1,
      default: 0.3,
      valueName: 'x',
      doc: "match rate above which a request follows the cache (the gateway's cache_threshold, CLI default 0.3)",
    },
    {
      name: 'balanceAbsThreshold',
      type: 'integer',
      min: 0,
      max: 1_000_000,
      default: 64,
      valueName: 'n',
      doc: "spill gate, requests above the mean (the gateway's balance_abs_threshold, CLI default 64)",
    },
    {
      name: 'balanceRelThreshold',
      type: 'number',
      min: 0,
      max: 1000,
      default: 1.5,
      valueName: 'x',
      doc: "spill gate, multiple of the mean (the gateway's balance_rel_threshold, CLI default 1.5)",
    },
    {
      name: 'evictionIntervalSecs',
      type: 'integer',
      min: 0,
      max: 86_400,
      default: 120,
      valueName: 'seconds',
      doc: "seconds between tree evictions, 0 = never (the gateway's eviction_interval, CLI default 120)",
    },
    {
      name: 'maxTreeSize',
      type: 'integer',
      min: 1,
      max: 1_099_511_627_776,
      default: 67_108_864,
      valueName: 'chars',
      doc: "characters a model's tree keeps at eviction (the gateway's max_tree_size, CLI default 2^26)",
    },
    {
      name: 'matchBlockChars',
      type: 'integer',
      min: 16,
      max: 65_536,
      default: 64,
      valueName: 'chars',
      doc: 'characters per tree node (ours: the gateway matches characters; 64 = one 16-token vLLM block)',
    },
  ],
  create: (o, deps) =>
    new SmgCacheAwarePolicy(
      {
        cacheThreshold: o.cacheThreshold,
        balanceAbsThreshold: o.balanceAbsThreshold,
        balanceRelThreshold: o.balanceRelThreshold,
        evictionIntervalSecs: o.evictionIntervalSecs,
        maxTreeSize: o.maxTreeSize,
        matchBlockChars: o.matchBlockChars,
      },
      deps.rng,
      deps.stateHashKey,
    ),
});
