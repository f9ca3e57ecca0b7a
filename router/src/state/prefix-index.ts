import { CHARS_PER_TOKEN } from './block-hash';
import type { RoutingBlockKey } from './state-hash-key';

/**
 * The cache-aware policy's memory of what each instance was recently sent: per instance, the chained block
 * hashes of the prompts routed to it, bounded by a capacity in blocks with least-recently-used eviction.
 *
 * Each instance's entries live in one Map from block hash to a recency number; a Map iterates in insertion
 * order, so deleting and re-inserting a key on every touch makes its first key the least recently used one
 * (O(1) touch and eviction, no linked list). Keys are 64-bit keyed block hashes (RoutingBlockKey: 8-character
 * one-byte strings, hashed once by V8 and compared by content).
 *
 * A prompt's blocks are touched last block first, so within a prompt the first block is the most recent. With
 * chained hashes, block i is present only if the prompt that brought it also brought blocks 0..i-1, touched no
 * earlier; so LRU always evicts a chain from its end and the cached part of any prompt is a prefix of its
 * blocks. That makes `match` a binary search: O(log n) lookups, whatever the index holds.
 */
export class InstancePrefixIndex {
  private readonly entries = new Map<RoutingBlockKey, number>();

  constructor(public capacityBlocks: number) {}

  get size(): number {
    return this.entries.size;
  }

  has(hash: RoutingBlockKey): boolean {
    return this.entries.has(hash);
  }

  /** The recency number of a block, or undefined when it is not indexed. */
  recencyOf(hash: RoutingBlockKey): number | undefined {
    return this.entries.get(hash);
  }

  /** How many leading blocks of `hashes` the index holds (the longest cached prefix). */
  match(hashes: readonly RoutingBlockKey[]): number {
    return this.matchNewerThan(hashes, -Infinity);
  }

  /**
   * The recency of each block of `hashes`' longest indexed prefix, before this request touches them: what the
   * engine's answer is checked against (engineEvictionCutoff).
   */
  recenciesOfMatch(hashes: readonly RoutingBlockKey[]): Float64Array {
    const matched = new Float64Array(this.match(hashes));
    for (let i = 0; i < matched.length; i++) matched[i] = this.entries.get(hashes[i])!;
    return matched;
  }

  /**
   * How many leading blocks of `hashes` the index holds with a recency above `recency`: the part of the longest
   * prefix touched since then. Prefix-closed like `match` (a chain's earlier blocks are never less recent than its
   * later ones), so also a binary search.
   */
  matchNewerThan(hashes: readonly RoutingBlockKey[], recency: number): number {
    const entries = this.entries;
    const newer = (h: RoutingBlockKey) => (entries.get(h) ?? -Infinity) > recency;
    if (hashes.length === 0 || !newer(hashes[0])) return 0;
    // Invariant: blocks [0, lo) qualify; block hi (if < length) does not.
    let lo = 1;
    let hi = hashes.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (newer(hashes[mid])) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  /**
   * Touches every block of a prompt (last first), with recency numbers from `clock`, then evicts down to
   * capacity. The prompt's trailing blocks that are already among the most recent quarter of the index are left
   * where they are (they cannot be evicted before three quarters of the capacity is replaced; re-ordering a large
   * Map on every hit is what would make a full index slower than an empty one). Once one block is touched, every
   * block before it is too, so a chain's earlier blocks stay more recent than its later ones.
   */
  record(hashes: readonly RoutingBlockKey[], clock: RecencyClock): void {
    const entries = this.entries;
    const recent = clock.now - this.capacityBlocks / 4;
    let touching = false;
    for (let i = hashes.length - 1; i >= 0; i--) {
      const h = hashes[i];
      const seen = entries.get(h);
      if (seen !== undefined) {
        if (!touching && seen > recent) continue;
        entries.delete(h);
      }
      touching = true;
      entries.set(h, clock.tick());
    }
    this.evictToCapacity();
  }

  /** Drops every block not used more recently than `recency` (the instance evidently evicted them). Returns how many. */
  evictNotNewerThan(recency: number): number {
    return this.evictOldest(recency, Infinity).dropped;
  }

  /**
   * Drops the least recently used blocks, oldest first, while they were used no later than `recency`, at most
   * `maxBlocks` of them. Evicting from the old end keeps every chain prefix-closed (as evictNotNewerThan, which the
   * result's `cutoff`, the recency of the last block dropped, reproduces exactly on a copy of this index).
   */
  evictOldest(recency: number, maxBlocks: number): { readonly dropped: number; readonly cutoff: number | undefined } {
    let dropped = 0;
    let cutoff: number | undefined;
    for (const [hash, seen] of this.entries) {
      if (seen > recency || dropped >= maxBlocks) break;
      this.entries.delete(hash);
      cutoff = seen;
      dropped++;
    }
    return { dropped, cutoff };
  }

  evictToCapacity(): void {
    const entries = this.entries;
    if (entries.size <= this.capacityBlocks) return;
    const keys = entries.keys();
    while (entries.size > this.capacityBlocks) entries.delete(keys.next().value as RoutingBlockKey);
  }

  clear(): void {
    this.entries.clear();
  }

  /** Every entry, least recently used first: what a copy needs to continue identically (`restore`). */
  export(): { readonly hashes: RoutingBlockKey[]; readonly recency: Float64Array } {
    const hashes = new Array<RoutingBlockKey>(this.entries.size);
    const recency = new Float64Array(this.entries.size);
    let i = 0;
    for (const [hash, seen] of this.entries) {
      hashes[i] = hash;
      recency[i++] = seen;
    }
    return { hashes, recency };
  }

  /** Replaces the contents with an `export`ed list (least recently used first). */
  restore(hashes: readonly RoutingBlockKey[], recency: ArrayLike<number>): void {
    if (hashes.length !== recency.length)
      throw new RangeError(`restore needs one recency per hash (${hashes.length} hashes, ${recency.length} recencies)`);
    this.entries.clear();
    for (let i = 0; i < hashes.length; i++) this.entries.set(hashes[i], recency[i]);
    this.evictToCapacity();
  }
}

/**
 * Blocks an engine must report missing (its `cached_tokens` below an index's match) before the index is corrected:
 * the chat template shifts block edges, and vLLM recomputes the last prompt token.
 */
export const FEEDBACK_TOLERANCE_BLOCKS = 2;

/**
 * What the engine's `cached_tokens` for a request shows it evicted, given the recencies its matched blocks had
 * (`recenciesOfMatch`): when it served at least FEEDBACK_TOLERANCE_BLOCKS fewer blocks than matched, the first
 * block it did not serve was evicted and, being LRU, everything it used no later: the recency to evict up to
 * (`evictNotNewerThan`). Undefined when the answer agrees with the index.
 */
export function engineEvictionCutoff(
  matchedRecencies: Float64Array,
  cachedTokens: number,
  blockChars: number,
): number | undefined {
  const deliveredBlocks = deliveredBlocksOf(cachedTokens, blockChars);
  return matchedRecencies.length - deliveredBlocks < FEEDBACK_TOLERANCE_BLOCKS
    ? undefined
    : matchedRecencies[deliveredBlocks];
}

/** The routing blocks `cachedTokens` cover. */
function deliveredBlocksOf(cachedTokens: number, blockChars: number): number {
  return Math.floor((cachedTokens * CHARS_PER_TOKEN) / blockChars);
}

/** What an index recorded of a request when it was admitted: what the engine's report on it is checked against. */
export interface FeedbackAdmission {
  /** recenciesOfMatch of the request's blocks before it touched them. */
  readonly priorRecency: Float64Array;
  /** The index clock when it was admitted (before its blocks were recorded). */
  readonly clockAtAdmission: number;
}

/**
 * Engine feedback for one instance's index that a request cannot abuse (index poisoning): one home for the rule
 * shared by the cache-aware policy's own index and an instance's published index.
 *
 * A request's `cached_tokens` below the index's match says that the engine did not serve *this rendering* of its
 * blocks. A request whose routing text matches a hot prefix but renders differently (another role structure, an
 * adapter, a template) reports 0 while the engine still holds the prefix, and the LRU inference of
 * engineEvictionCutoff (everything used no later than the missed block is gone) would then drop the whole index.
 * So a report evicts only when two things hold:
 *
 * 1. **It agrees with LRU, given the engine's other reports.** An LRU cache never evicts a block while it keeps one
 *    used less recently. Each report that served blocks proves the engine holds blocks as deep (index ticks since
 *    their last use, at admission) as its deepest served block; a report that a block was evicted is believed only
 *    if that block is at least as deep as the deepest the engine was proven to serve within the last
 *    `capacityBlocks` ticks (one turnover of the index: an older proof says nothing about what the cache holds now,
 *    and the engine's usable cache shrinks as running requests pin blocks). A hot prefix, re-used all the time, is
 *    shallower than what the engine proves it serves, so a report against it changes nothing; the request that
 *    missed has recomputed its blocks anyway, so they are cached now in the rendering it uses.
 * 2. **It evicts no faster than the engine can.** An LRU engine evicts a block only to make room for one it
 *    admits, so between two corrections it cannot have lost more blocks than the index recorded since: a
 *    correction drops at most that many, oldest first (the first one may drop everything: the index may start out
 *    believing the engine holds more than it can).
 */
export class EngineFeedback {
  private provenDepth = 0;
  private provenAtClock = -Infinity;
  private clockAtLastCorrection = 0;

  /**
   * Applies the engine's `cachedTokens` for a request admitted as `admission` to `index`: returns the recency up to
   * which it evicted (for observers to replay with evictNotNewerThan), or undefined when it evicted nothing.
   */
  correct(
    index: InstancePrefixIndex,
    clock: RecencyClock,
    admission: FeedbackAdmission,
    cachedTokens: number,
    blockChars: number,
  ): number | undefined {
    const { priorRecency, clockAtAdmission } = admission;
    const delivered = Math.min(deliveredBlocksOf(cachedTokens, blockChars), priorRecency.length);
    const proofIsCurrent = clock.now - this.provenAtClock <= index.capacityBlocks;
    if (delivered > 0) {
      const servedDepth = clockAtAdmission - priorRecency[delivered - 1];
      if (!proofIsCurrent || servedDepth >= this.provenDepth) {
        this.provenDepth = servedDepth;
        this.provenAtClock = clock.now;
      }
    }
    const notNewerThan = engineEvictionCutoff(priorRecency, cachedTokens, blockChars);
    if (notNewerThan === undefined) return undefined;
    // 1. A block shallower than one the engine was just seen serving cannot have been evicted by an LRU cache.
    if (proofIsCurrent && clockAtAdmission - notNewerThan < this.provenDepth) return undefined;
    // 2. No more than the blocks recorded since the last correction.
    const budget = clock.now - this.clockAtLastCorrection;
    this.clockAtLastCorrection = clock.now;
    return index.evictOldest(notNewerThan, budget).cutoff;
  }
}

/** Monotonic recency numbers shared by the indexes of one policy. */
export class RecencyClock {
  constructor(private current = 0) {}

  /** The last number handed out. */
  get now(): number {
    return this.current;
  }

  tick(): number {
    return ++this.current;
  }

  /** Continues from `value` (a copy of another index catching up with it). */
  set(value: number): void {
    this.current = value;
  }
}

/** One InstancePrefixIndex per instance id. */
export class PrefixIndex {
  private readonly byInstance = new Map<string, InstancePrefixIndex>();
  readonly clock = new RecencyClock();

  /** The instance's index, created empty with `capacityBlocks` on first use; a changed capacity applies at once. */
  forInstance(id: string, capacityBlocks: number): InstancePrefixIndex {
    let index = this.byInstance.get(id);
    if (index === undefined) {
      index = new InstancePrefixIndex(capacityBlocks);
      this.byInstance.set(id, index);
    } else if (index.capacityBlocks !== capacityBlocks) {
      index.capacityBlocks = capacityBlocks;
      index.evictToCapacity();
    }
    return index;
  }

  get(id: string): InstancePrefixIndex | undefined {
    return this.byInstance.get(id);
  }

  /** Forgets instances not in `keep` (removed or ejected: their caches are gone or unknown). */
  retainOnly(keep: ReadonlySet<string>): void {
    for (const id of [...this.byInstance.keys()]) if (!keep.has(id)) this.byInstance.delete(id);
  }

  instanceIds(): string[] {
    return [...this.byInstance.keys()];
  }

  /** Blocks indexed over all instances. */
  get totalBlocks(): number {
    let n = 0;
    for (const index of this.byInstance.values()) n += index.size;
    return n;
  }
}

/**
 * KV capacity per instance, in tokens, when the engine does not report one (no vllm:cache_config_info): about one
 * TP8 H100 node serving a 70B model. Sizes the cache-aware index and the published instance state alike.
 */
export const DEFAULT_KV_CACHE_TOKENS = 1_000_000;

/**
 * A prefix index's capacity in `blockChars`-character routing blocks for an instance holding `kvCapacityTokens`
 * of KV cache: what it can hold, so the index forgets about when the engine does. Never below one block.
 */
export function capacityBlocksFor(kvCapacityTokens: number, blockChars: number): number {
  return Math.max(1, Math.floor((kvCapacityTokens * CHARS_PER_TOKEN) / blockChars));
}
