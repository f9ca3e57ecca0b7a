import type { RoutingRequest } from '../../protocol/routing-request';
import type { RoutingBlockKey } from '../../state/state-hash-key';
import type { InstanceView, RoutingDecision, RoutingSnapshot } from '../routing-policy';
import type { SmgPrefixTree } from './smg-prefix-tree';
import type { CandidateStage, DecisionFacts } from './stage';

/** What SGLang Model Gateway's stages read about a request. */
export interface SmgFacts extends DecisionFacts {
  /** The request's routing blocks (chained hashes, seeded by its model). */
  readonly hashes: readonly RoutingBlockKey[];
  /** Characters of its routed text: the denominator of the match rate. */
  readonly textChars: number;
}

/** One worker as the gateway compares it. */
export interface SmgCandidate {
  readonly view: InstanceView;
  /** Characters of the request's prefix the worker was sent (whole blocks). */
  readonly matchedChars: number;
  /** Requests the gateway has sent the worker: its tie-break after load. */
  readonly processed: number;
  /** Its place among the candidates: the last tie-break. */
  readonly position: number;
}

/**
 * Matches the request against the model's approximate tree (SmgPrefixTree) for each candidate, and reads how many
 * requests each was sent. Commit inserts the prompt for the chosen worker (the gateway inserts for the worker it
 * selected, hit, spill or miss alike) and counts it; every `evictionIntervalMs` of the caller's clock the tree is
 * cut back to `maxTreeChars` (the gateway's periodic eviction thread; 0 turns it off).
 */
export class SmgTreeCandidates implements CandidateStage<SmgCandidate, SmgFacts> {
  readonly kind = 'candidates';
  readonly name = 'smg-prefix-tree';
  private readonly processed = new Map<string, number>();
  private nextEvictionAtMs: number | undefined;

  constructor(
    private readonly tree: SmgPrefixTree,
    private readonly options: {
      readonly blockChars: number;
      readonly evictionIntervalMs: number;
      readonly maxTreeChars: number;
    },
    private readonly hashesOf: (request: RoutingRequest) => readonly RoutingBlockKey[],
  ) {}

  candidatesOf(instances: readonly InstanceView[], facts: SmgFacts): readonly SmgCandidate[] {
    const ids = instances.map((v) => v.id);
    const matched = this.tree.matchedBlocks(facts.request.model, facts.hashes, ids);
    return instances.map((view, position) => ({
      view,
      matchedChars: matched[position] * this.options.blockChars,
      processed: this.processed.get(view.id) ?? 0,
      position,
    }));
  }

  commit(request: RoutingRequest, decision: RoutingDecision, snapshot: RoutingSnapshot | undefined): void {
    this.tree.insert(request.model, this.hashesOf(request), decision.instance);
    this.processed.set(decision.instance, (this.processed.get(decision.instance) ?? 0) + 1);
    const interval = this.options.evictionIntervalMs;
    if (interval === 0 || snapshot === undefined) return;
    if (this.nextEvictionAtMs === undefined) this.nextEvictionAtMs = snapshot.nowMs + interval;
    if (snapshot.nowMs < this.nextEvictionAtMs) return;
    this.tree.evict(this.options.maxTreeChars);
    this.nextEvictionAtMs = snapshot.nowMs + interval;
  }
}
