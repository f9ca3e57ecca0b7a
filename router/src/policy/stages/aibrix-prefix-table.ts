import type { RoutingRequest } from '../../protocol/routing-request';
import type { InstanceView, RoutingDecision, RoutingSnapshot } from '../routing-policy';
import { AibrixBlockStore } from './aibrix-block-store';
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
 * Blocks are slots of typed arrays keyed by their 53-bit chained hash (aibrix-block-store.ts): a 4-character block
 * costs one index probe and allocates nothing.
 */
export class AibrixPrefixTable implements CandidateStage<AibrixCandidate, AibrixFacts> {
  readonly kind = 'candidates';
  readonly name = 'aibrix-prefix-table';
  private readonly blocks = new AibrixBlockStore();
  private lastSweepMs = -Infinity;
  private lastWriteMs = -Infinity;
  /**
   * True while no write's clock was before an earlier one's: the order of writing is then also the order of write
   * times, so the expired blocks come first and a sweep stops at the first live one. A clock that went back scans
   * them all.
   */
  private writesInClockOrder = true;

  constructor(
    private readonly options: AibrixTableOptions,
    private readonly hashesOf: (request: RoutingRequest) => Float64Array,
  ) {}

  candidatesOf(instances: readonly InstanceView[], facts: AibrixFacts): readonly AibrixCandidate[] {
    const { blocks } = this;
    const { hashes } = facts;
    const n = hashes.length;
    const { nowMs } = facts.snapshot;
    const ttlMs = this.options.blockTtlMs;
    const percent = new Array<number>(instances.length).fill(0);
    const pods = instances.map((v) => blocks.podNumberOf(v.id));
    const holds = (slot: number, i: number) => pods[i] >= 0 && blocks.holds(slot, pods[i]);
    // The pods (indexes into `instances`) that held every block walked so far; one that stops holding keeps the
    // percent of the block before, the last it held. The walk ends at a missing or expired block, or one none holds.
    const ready = instances.map((_, i) => i);
    let matched = 0;
    for (; matched < n; matched++) {
      const slot = blocks.slotOf(hashes[matched]);
      if (slot === -1 || blocks.writtenAt(slot) + ttlMs < nowMs) break;
      let holding = 0;
      for (const i of ready) if (holds(slot, i)) holding++;
      if (holding === 0) break;
      if (holding < ready.length) narrow(ready, slot, holds, percent, matchPercentOf(matched, n));
    }
    if (matched > 0) for (const i of ready) percent[i] = matchPercentOf(matched, n);
    return instances.map((view, i) => ({ view, matchPercent: percent[i] }));
  }

  commit(request: RoutingRequest, decision: RoutingDecision, snapshot: RoutingSnapshot | undefined): void {
    const nowMs = snapshot?.nowMs ?? 0;
    if (nowMs < this.lastWriteMs) this.writesInClockOrder = false;
    this.lastWriteMs = nowMs;
    const { blocks } = this;
    const pod = blocks.podNumber(decision.instance);
    const hashes = this.hashesOf(request);
    for (let i = 0; i < hashes.length; i++) blocks.write(hashes[i], pod, nowMs);
    blocks.evictOldestWhileOver(this.options.maxBlocks);
    if (nowMs - this.lastSweepMs < 1000) return;
    this.lastSweepMs = nowMs;
    const ttlMs = this.options.blockTtlMs;
    blocks.sweep((writtenAtMs) => writtenAtMs + ttlMs < nowMs, this.writesInClockOrder);
  }
}

/** Keeps in `ready` the pods that hold `slot`; the others get `previousPercent`, the percent of their last block. */
function narrow(
  ready: number[],
  slot: number,
  holds: (slot: number, i: number) => boolean,
  percent: number[],
  previousPercent: number,
): void {
  let kept = 0;
  for (const i of ready) {
    if (holds(slot, i)) ready[kept++] = i;
    else percent[i] = previousPercent;
  }
  ready.length = kept;
}

/** AIBrix's match percent after `matched` of `blocks` blocks: (matched × 100) ÷ blocks, rounded down. */
function matchPercentOf(matched: number, blocks: number): number {
  return Math.floor((matched * 100) / blocks);
}
