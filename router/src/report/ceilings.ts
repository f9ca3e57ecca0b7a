import { blockHashes, cacheableHitTokens, DEFAULT_BLOCK_TOKENS, tokenCount, type BlockHash } from '../state/block-hash';
import { BlockLru } from './block-lru';

/**
 * Cache-hit ceilings computed from the workload alone, with no router and no engine:
 *
 * - ideal: one prefix cache of unlimited size sees every request in arrival order; a request hits its leading
 *   blocks that any earlier request produced (full blocks only, never the last prompt token:
 *   cacheableHitTokens). No placement of requests on instances can do better.
 * - fleet: the same with one LRU cache of blocks as large as all instances' KV together. A router that splits
 *   traffic over instances only has smaller, separate caches, so it cannot beat this either (bar timing
 *   effects, which are small); a policy's hit rate as a fraction of it is the honest score.
 *
 * Both count prompt blocks only (generated tokens are not reused by the next request's prompt text here), and
 * ignore that running requests pin their blocks. The fleet LRU touches every block of every request in
 * order, so its contents at capacity C are always a subset of those at C + 1 (LRU's inclusion property): the
 * fleet ceiling never falls when capacity grows, and never exceeds the ideal.
 */
export interface CeilingOptions {
  /** Blocks of the one fleet-wide LRU cache: KV blocks per instance × instances. */
  readonly fleetCapacityBlocks: number;
  /** Tokens per KV block (default 16, as the engine model). */
  readonly blockTokens?: number;
}

export interface Ceilings {
  readonly requests: number;
  readonly promptTokens: number;
  readonly blockTokens: number;
  readonly fleetCapacityBlocks: number;
  readonly idealHitTokens: number;
  /** idealHitTokens / promptTokens; null with no prompt tokens. */
  readonly idealHitRate: number | null;
  readonly fleetHitTokens: number;
  readonly fleetHitRate: number | null;
  /** Distinct blocks the workload produced (what an unbounded cache would hold at the end). */
  readonly distinctBlocks: number;
}

export interface RequestCeiling {
  readonly promptTokens: number;
  readonly idealHitTokens: number;
  readonly fleetHitTokens: number;
}

/** Feeds requests one at a time (a simulator can call it as it goes, so prompts are rendered once). */
export class CeilingTracker {
  private readonly blockTokens: number;
  private readonly fleet: BlockLru;
  private requests = 0;
  private promptTokens = 0;
  private idealHitTokens = 0;
  private fleetHitTokens = 0;

  constructor(private readonly options: CeilingOptions) {
    this.blockTokens = options.blockTokens ?? DEFAULT_BLOCK_TOKENS;
    if (!Number.isInteger(this.blockTokens) || this.blockTokens < 1)
      throw new RangeError(`blockTokens must be a positive integer (got ${this.blockTokens})`);
    this.fleet = new BlockLru(options.fleetCapacityBlocks, true);
  }

  /** Account one request, given its prompt exactly as the engine sees it (chat template applied). */
  observe(renderedPrompt: string): RequestCeiling {
    return this.observeBlocks(
      blockHashes(renderedPrompt, { blockTokens: this.blockTokens }),
      tokenCount(renderedPrompt),
    );
  }

  /**
   * Account one request from block hashes already computed (blockHashes of the rendered prompt with this
   * tracker's blockTokens and no seed), so a simulator that hashes prompts for its engine model need not hash
   * them twice.
   */
  observeBlocks(hashes: ArrayLike<BlockHash>, promptTokens: number): RequestCeiling {
    // Until a request's first miss nothing was inserted (so nothing evicted), so "present before this request"
    // and "present now" agree for its leading blocks; the hit is that leading run. Ideal: every block ever seen
    // is in the fleet LRU or was evicted from it.
    const fleet = this.fleet.touchSequence(hashes);
    const ideal = this.fleet.lastEverHeldLeading;
    const result = {
      promptTokens,
      idealHitTokens: cacheableHitTokens(ideal, promptTokens, this.blockTokens),
      fleetHitTokens: cacheableHitTokens(fleet, promptTokens, this.blockTokens),
    };
    this.requests++;
    this.promptTokens += promptTokens;
    this.idealHitTokens += result.idealHitTokens;
    this.fleetHitTokens += result.fleetHitTokens;
    return result;
  }

  /**
   * Zeroes the counts but keeps both caches: call it when a warm-up ends, so the ceilings cover the measured
   * requests while the warm-up's prefixes stay cached, as they stay in the engines.
   */
  endWarmup(): void {
    this.requests = 0;
    this.promptTokens = 0;
    this.idealHitTokens = 0;
    this.fleetHitTokens = 0;
  }

  result(): Ceilings {
    const rate = (hits: number): number | null => (this.promptTokens > 0 ? hits / this.promptTokens : null);
    return {
      requests: this.requests,
      promptTokens: this.promptTokens,
      blockTokens: this.blockTokens,
      fleetCapacityBlocks: this.options.fleetCapacityBlocks,
      idealHitTokens: this.idealHitTokens,
      idealHitRate: rate(this.idealHitTokens),
      fleetHitTokens: this.fleetHitTokens,
      fleetHitRate: rate(this.fleetHitTokens),
      distinctBlocks: this.fleet.everHeldCount,
    };
  }
}

/**
 * Ceilings of a whole workload in one streaming pass. `render` turns a request into the prompt text the
 * engine sees (the chat template lives with the engine model); requests are consumed lazily and not kept.
 */
export function computeCeilings<T>(
  requests: Iterable<T>,
  render: (request: T) => string,
  options: CeilingOptions,
): Ceilings {
  const tracker = new CeilingTracker(options);
  for (const request of requests) tracker.observe(render(request));
  return tracker.result();
}

/** A policy's hit rate as a fraction of the fleet ceiling (the score); null when either is unknown or the ceiling is 0. */
export function scoreAgainstCeiling(hitRate: number | null, ceilings: Ceilings | null | undefined): number | null {
  const ceiling = ceilings?.fleetHitRate;
  if (hitRate === null || ceiling === null || ceiling === undefined || ceiling === 0) return null;
  return hitRate / ceiling;
}
