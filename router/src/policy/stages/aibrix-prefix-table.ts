import type { RoutingRequest } from '../../protocol/routing-request';
import type { RoutingBlockKey } from '../../state/state-hash-key';
import type { InstanceView, RoutingDecision, RoutingSnapshot } from '../routing-policy';
import type { CandidateStage, DecisionFacts } from './stage';

/** What AIBrix's stages read about a request. */
export interface AibrixFacts extends DecisionFacts {
  readonly hashes: readonly RoutingBlockKey[];
}

/** One pod as AIBrix's prefix-cache router sees it. */
export interface AibrixCandidate {
  readonly view: InstanceView;
  /** Percent of the prompt's blocks matched, as AIBrix computes it ((i + 1) × 100 ÷ blocks, integer); 0: no match. */
  readonly matchPercent: number;
}

interface Entry {
  readonly pods: Set<string>;
  /** The caller's clock when a pod was last added (AIBrix's per-pod access time, kept per block here). */
  atMs: number;
}

/** AIBrix's prefix hash table bounds: blocks kept (LRU) and how long an unused block lives. */
export interface AibrixTableOptions {
  readonly maxBlocks: number;
  readonly blockTtlMs: number;
}

/**
 * AIBrix's PrefixHashTable: chained block hashes → the pods sent them, an LRU of `maxBlocks` whose entries expire
 * `blockTtlMs` after they were last written. The match walks the prompt's blocks and narrows the pods to those that
 * held every block so far, recording for each the percent matched when it last held one; commit adds the prompt for
 * the chosen pod at the caller's clock, and drops expired blocks at most once a second (AIBrix's eviction interval).
 */
export class AibrixPrefixTable implements CandidateStage<AibrixCandidate, AibrixFacts> {
  readonly kind = 'candidates';
  readonly name = 'aibrix-prefix-table';
  private readonly entries = new Map<RoutingBlockKey, Entry>();
  private lastSweepMs = -Infinity;

  constructor(
    private readonly options: AibrixTableOptions,
    private readonly hashesOf: (request: RoutingRequest) => readonly RoutingBlockKey[],
  ) {}

  candidatesOf(instances: readonly InstanceView[], facts: AibrixFacts): readonly AibrixCandidate[] {
    const percent = new Map<string, number>();
    let ready = instances.map((v) => v.id);
    const n = facts.hashes.length;
    for (let i = 0; i < n; i++) {
      const entry = this.entries.get(facts.hashes[i]);
      if (entry === undefined || entry.atMs + this.options.blockTtlMs < facts.snapshot.nowMs) break;
      const holding = ready.filter((id) => entry.pods.has(id));
      if (holding.length === 0) break;
      for (const id of holding) percent.set(id, Math.floor(((i + 1) * 100) / n));
      ready = holding;
    }
    return instances.map((view) => ({ view, matchPercent: percent.get(view.id) ?? 0 }));
  }

  commit(request: RoutingRequest, decision: RoutingDecision, snapshot: RoutingSnapshot | undefined): void {
    const nowMs = snapshot?.nowMs ?? 0;
    for (const key of this.hashesOf(request)) {
      const entry = this.entries.get(key) ?? { pods: new Set<string>(), atMs: nowMs };
      this.entries.delete(key);
      entry.pods.add(decision.instance);
      entry.atMs = nowMs;
      this.entries.set(key, entry);
    }
    // One iterator for the whole eviction: a fresh keys().next() per eviction rescans the slots of entries deleted
    // before it (V8 keeps them until the map is rehashed), which made each commit quadratic in the blocks evicted.
    const oldest = this.entries.keys();
    while (this.entries.size > this.options.maxBlocks) this.entries.delete(oldest.next().value as RoutingBlockKey);
    if (nowMs - this.lastSweepMs < 1000) return;
    this.lastSweepMs = nowMs;
    for (const [key, entry] of this.entries) if (entry.atMs + this.options.blockTtlMs < nowMs) this.entries.delete(key);
  }
}
