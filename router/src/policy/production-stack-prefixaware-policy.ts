import type { Rng } from '../common/seeded-rng';
import { processStateHashKey, type StateHashKey } from '../state/state-hash-key';
import { definePolicy } from './policy-definition';
import { memoizedRoutingBlockHashes } from './routing-blocks';
import { HashTrieCandidates, type ChunkFacts, type TrieCandidate } from './stages/hash-trie-candidates';
import { HEALTHY_FILTER } from './stages/healthy-filter';
import { randomLongestPicker } from './stages/random-longest-picker';
import { SERVES_MODEL_FILTER } from './stages/serves-model-filter';
import { StagedPolicy } from './stages/staged-policy';

/**
 * `production-stack-prefixaware`: vLLM production-stack's `prefixaware` routing logic, as
 * vllm-project/production-stack `src/vllm_router/routers/routing_logic.py` (PrefixAwareRouter) and
 * `src/vllm_router/prefix/hashtrie.py` (HashTrie, chunk_size 128) implement it (read 2026-12-06): the prompt, cut
 * into 128-character chunks, walks a trie of what each endpoint was sent; the endpoints holding the longest prefix
 * (narrowed chunk by chunk to those that held every earlier chunk; all endpoints when nothing matches) are the
 * candidates, one is chosen uniformly at random, and the prompt is inserted for it. Load plays no part.
 *
 * Assumed: chunks are this router's chained routing blocks (one key per trie path) of `chunkChars` characters,
 * so a trailing partial chunk is not matched (the trie matches it when identical); the prompt is the routing text
 * (message text in order; production-stack joins message contents with newlines, which changes no match between
 * two conversations); the trie is bounded at `maxTrieNodes` (least recently inserted dropped first), as the
 * trie's later releases bound it by memory, where the version read is unbounded.
 */
export class ProductionStackPrefixAwarePolicy extends StagedPolicy<TrieCandidate, 'trie-longest-prefix', ChunkFacts> {
  constructor(
    readonly options: { readonly chunkChars: number; readonly maxTrieNodes: number },
    rng: Rng,
    stateHashKey: StateHashKey = processStateHashKey(),
  ) {
    const hashesOf = memoizedRoutingBlockHashes(options.chunkChars, stateHashKey);
    super('production-stack-prefixaware', {
      factsOf: (request, snapshot) => ({ request, snapshot, hashes: hashesOf(request) }),
      instanceFilters: [SERVES_MODEL_FILTER, HEALTHY_FILTER],
      candidates: new HashTrieCandidates(options.maxTrieNodes, hashesOf),
      stages: [randomLongestPicker(rng, 'trie-longest-prefix')],
    });
  }
}

export const productionStackPrefixAwareDefinition = definePolicy({
  name: 'production-stack-prefixaware',
  description:
    "vLLM production-stack's prefixaware (routing_logic.py + prefix/hashtrie.py, read 2026-12-06): longest-prefix trie of 128-character chunks over what each endpoint was sent; uniform random among the endpoints holding the longest match; no load term",
  reasons: ['trie-longest-prefix'],
  stages: [
    { kind: 'filter', name: 'serves-model' },
    { kind: 'filter', name: 'healthy' },
    { kind: 'candidates', name: 'hash-trie' },
    { kind: 'picker', name: 'random-longest' },
  ],
  options: [
    {
      name: 'chunkChars',
      type: 'integer',
      min: 16,
      max: 65_536,
      default: 128,
      valueName: 'chars',
      doc: "characters per trie chunk (production-stack's HashTrie chunk_size, default 128)",
    },
    {
      name: 'maxTrieNodes',
      type: 'integer',
      min: 1,
      max: 1_000_000_000,
      default: 8_000_000,
      valueName: 'n',
      doc: "chunk nodes kept, least recently inserted dropped first (ours: bounds memory as the trie's later releases do by bytes)",
    },
  ],
  create: (o, deps) =>
    new ProductionStackPrefixAwarePolicy(
      { chunkChars: o.chunkChars, maxTrieNodes: o.maxTrieNodes },
      deps.rng,
      deps.stateHashKey,
    ),
});
