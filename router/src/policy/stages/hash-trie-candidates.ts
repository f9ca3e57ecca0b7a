import type { RoutingRequest } from '../../protocol/routing-request';
import type { RoutingBlockKey } from '../../state/state-hash-key';
import type { InstanceView, RoutingDecision } from '../routing-policy';
import type { CandidateStage, DecisionFacts } from './stage';

/** What a trie-matching stage reads about a request: its chunks' chained keys. */
export interface ChunkFacts extends DecisionFacts {
  readonly hashes: readonly RoutingBlockKey[];
}

/** One endpoint as the trie sees it. */
export interface TrieCandidate {
  readonly view: InstanceView;
  /** True when it is among the endpoints holding the longest matched prefix (all endpoints when nothing matched). */
  readonly longest: boolean;
}

/**
 * vLLM production-stack's HashTrie: which endpoints were sent each prompt prefix, chunk by chunk. The longest match
 * walks the prompt's chunks while some endpoint still holding the path is among those that held every earlier
 * chunk; those endpoints are the candidates marked `longest` (every candidate when the first chunk is unknown).
 * Commit inserts the prompt for the chosen endpoint. Bounded: past `maxNodes` chunk nodes the least recently
 * inserted node is dropped (the trie's later releases evict by memory; the version read has no eviction).
 */
export class HashTrieCandidates implements CandidateStage<TrieCandidate, ChunkFacts> {
  readonly kind = 'candidates';
  readonly name = 'hash-trie';
  /** Chunk node (a chained key: one trie path) → endpoints sent it; Map order is insertion recency. */
  private readonly nodes = new Map<RoutingBlockKey, Set<string>>();

  constructor(
    private readonly maxNodes: number,
    private readonly hashesOf: (request: RoutingRequest) => readonly RoutingBlockKey[],
  ) {}

  candidatesOf(instances: readonly InstanceView[], facts: ChunkFacts): readonly TrieCandidate[] {
    let selected: ReadonlySet<string> = new Set(instances.map((v) => v.id));
    for (const key of facts.hashes) {
      const holders = this.nodes.get(key);
      if (holders === undefined) break;
      const both = new Set([...selected].filter((id) => holders.has(id)));
      if (both.size === 0) break;
      selected = both;
    }
    return instances.map((view) => ({ view, longest: selected.has(view.id) }));
  }

  commit(request: RoutingRequest, decision: RoutingDecision): void {
    for (const key of this.hashesOf(request)) {
      const holders = this.nodes.get(key) ?? new Set<string>();
      this.nodes.delete(key);
      holders.add(decision.instance);
      this.nodes.set(key, holders);
    }
    while (this.nodes.size > this.maxNodes) this.nodes.delete(this.nodes.keys().next().value as RoutingBlockKey);
  }
}
