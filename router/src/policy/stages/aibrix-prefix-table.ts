import type { RoutingRequest } from '../../protocol/routing-request';
import type { InstanceView, RoutingDecision, RoutingSnapshot } from '../routing-policy';
import type { CandidateStage, DecisionFacts } from './stage';

/** What AIBrix's stages read about a request. */
export interface AibrixFacts extends DecisionFacts {
  /** The prompt's chained block hashes (routing-blocks.ts memoizedUnkeyedRoutingBlockHashes). */
  readonly hashes: Float64Array;
}

/** One pod as AIBrix's prefix-cache router sees it. */
export interface AibrixCandidate {
  readonly view: InstanceView;
  /** Percent of the prompt's blocks matched, as AIBrix computes it ((i + 1) × 100 ÷ blocks, integer); 0: no match. */
  readonly matchPercent: number;
}

interface Entry {
  readonly key: number;
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
 *
 * Keys are numbers (53-bit chained hashes): a 4-character block costs one Map lookup, no string per block.
 */
export class AibrixPrefixTable implements CandidateStage<AibrixCandidate, AibrixFacts> {
  readonly kind = 'candidates';
  readonly name = 'aibrix-prefix-table';
  /** Least recently written first (a write moves its block to the end). */
  private readonly entries = new Map<number, Entry>();
  private lastSweepMs = -Infinity;
  private lastWriteMs = -Infinity;
  /**
   * True while no write's clock was before an earlier one's: the map's order is then also the order of `atMs`, so
   * the expired blocks are its head and a sweep stops at the first live one. A clock that went back scans it whole.
   */
  private writesInClockOrder = true;

  constructor(
    private readonly options: AibrixTableOptions,
    private readonly hashesOf: (request: RoutingRequest) => Float64Array,
  ) {}

  candidatesOf(instances: readonly InstanceView[], facts: AibrixFacts): readonly AibrixCandidate[] {
    const { hashes } = facts;
    const n = hashes.length;
    const { nowMs } = facts.snapshot;
    const ttlMs = this.options.blockTtlMs;
    const percent = new Array<number>(instances.length).fill(0);
    // The pods (indexes into `instances`) that held every block walked so far; one that stops holding keeps the
    // percent of the block before, the last it held. The walk ends at a missing or expired block, or one none holds.
    const ready = instances.map((_, i) => i);
    let matched = 0;
    for (; matched < n; matched++) {
      const entry = this.entries.get(hashes[matched]);
      if (entry === undefined || entry.atMs + ttlMs < nowMs) break;
      let holding = 0;
      for (const i of ready) if (entry.pods.has(instances[i].id)) holding++;
      if (holding === 0) break;
      if (holding < ready.length) this.narrow(ready, instances, entry.pods, percent, matchPercentOf(matched, n));
    }
    if (matched > 0) for (const i of ready) percent[i] = matchPercentOf(matched, n);
    return instances.map((view, i) => ({ view, matchPercent: percent[i] }));
  }

  /** Keeps in `ready` the pods `pods` holds; the others keep `previousPercent`, the percent of their last block. */
  private narrow(
    ready: number[],
    instances: readonly InstanceView[],
    pods: ReadonlySet<string>,
    percent: number[],
    previousPercent: number,
  ): void {
    let kept = 0;
    for (const i of ready) {
      if (pods.has(instances[i].id)) ready[kept++] = i;
      else percent[i] = previousPercent;
    }
    ready.length = kept;
  }

  commit(request: RoutingRequest, decision: RoutingDecision, snapshot: RoutingSnapshot | undefined): void {
    const nowMs = snapshot?.nowMs ?? 0;
    if (nowMs < this.lastWriteMs) this.writesInClockOrder = false;
    this.lastWriteMs = nowMs;
    const { entries } = this;
    const hashes = this.hashesOf(request);
    for (let i = 0; i < hashes.length; i++) {
      const key = hashes[i];
      let entry = entries.get(key);
      if (entry === undefined) entry = { key, pods: new Set<string>(), atMs: nowMs };
      else entries.delete(key);
      entry.pods.add(decision.instance);
      entry.atMs = nowMs;
      entries.set(key, entry);
    }
    // One iterator for the whole eviction: a fresh keys().next() per eviction rescans the slots of entries deleted
    // before it (V8 keeps them until the map is rehashed), which made each commit quadratic in the blocks evicted.
    const oldest = entries.keys();
    while (entries.size > this.options.maxBlocks) entries.delete(oldest.next().value as number);
    if (nowMs - this.lastSweepMs < 1000) return;
    this.lastSweepMs = nowMs;
    const ttlMs = this.options.blockTtlMs;
    for (const entry of entries.values()) {
      if (entry.atMs + ttlMs < nowMs) entries.delete(entry.key);
      else if (this.writesInClockOrder) break;
    }
  }
}

/** AIBrix's match percent after `matched` of `blocks` blocks: (matched × 100) ÷ blocks, rounded down. */
function matchPercentOf(matched: number, blocks: number): number {
  return Math.floor((matched * 100) / blocks);
}
