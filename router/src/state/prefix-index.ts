import { CHARS_PER_TOKEN } from './block-hash';

/**
 * The cache-aware policy's memory of what each instance was recently sent: per instance, the chained block
 * hashes of the prompts routed to it, bounded by a capacity in blocks with least-recently-used eviction.
 *
 * Each instance's entries live in one Map from block hash to a recency number; a Map iterates in insertion
 * order, so deleting and re-inserting a key on every touch makes its first key the least recently used one
 * (O(1) touch and eviction, no linked list). Hashes are 32-bit integers (small integers in V8: no boxing).
 *
 * A prompt's blocks are touched last block first, so within a prompt the first block is the most recent. With
 * chained hashes, block i is present only if the prompt that brought it also brought blocks 0..i-1, touched no
 * earlier; so LRU always evicts a chain from its end and the cached part of any prompt is a prefix of its
 * blocks. That makes `match` a binary search: O(log n) lookups, whatever the index holds.
 */
export class InstancePrefixIndex {
  private readonly entries = new Map<number, number>();

  constructor(public capacityBlocks: number) {}

  get size(): number {
    return this.entries.size;
  }

  has(hash: number): boolean {
    return this.entries.has(hash);
  }

  /** The recency number of a block, or undefined when it is not indexed. */
  recencyOf(hash: number): number | undefined {
    return this.entries.get(hash);
  }

  /** How many leading blocks of `hashes` the index holds (the longest cached prefix). */
  match(hashes: ArrayLike<number>): number {
    return this.matchNewerThan(hashes, -Infinity);
  }

  /**
   * The recency of each block of `hashes`' longest indexed prefix, before this request touches them: what the
   * engine's answer is checked against (engineEvictionCutoff).
   */
  recenciesOfMatch(hashes: ArrayLike<number>): Float64Array {
    const matched = new Float64Array(this.match(hashes));
    for (let i = 0; i < matched.length; i++) matched[i] = this.entries.get(hashes[i])!;
    return matched;
  }

  /**
   * How many leading blocks of `hashes` the index holds with a recency above `recency`: the part of the longest
   * prefix touched since then. Prefix-closed like `match` (a chain's earlier blocks are never less recent than its
   * later ones), so also a binary search.
   */
  matchNewerThan(hashes: ArrayLike<number>, recency: number): number {
    const entries = this.entries;
    const newer = (h: number) => (entries.get(h) ?? -Infinity) > recency;
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
  record(hashes: ArrayLike<number>, clock: RecencyClock): void {
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
    let dropped = 0;
    for (const [hash, seen] of this.entries) {
      if (seen > recency) break;
      this.entries.delete(hash);
      dropped++;
    }
    return dropped;
  }

  evictToCapacity(): void {
    const entries = this.entries;
    if (entries.size <= this.capacityBlocks) return;
    const keys = entries.keys();
    while (entries.size > this.capacityBlocks) entries.delete(keys.next().value as number);
  }

  clear(): void {
    this.entries.clear();
  }

  /** Every entry, least recently used first: what a copy needs to continue identically (`restore`). */
  export(): { readonly hashes: Int32Array; readonly recency: Float64Array } {
    const hashes = new Int32Array(this.entries.size);
    const recency = new Float64Array(this.entries.size);
    let i = 0;
    for (const [hash, seen] of this.entries) {
      hashes[i] = hash;
      recency[i++] = seen;
    }
    return { hashes, recency };
  }

  /** Replaces the contents with an `export`ed list (least recently used first). */
  restore(hashes: ArrayLike<number>, recency: ArrayLike<number>): void {
    if (hashes.length !== recency.length) throw new RangeError(`restore needs one recency per hash (${hashes.length} hashes, ${recency.length} recencies)`);
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
export function engineEvictionCutoff(matchedRecencies: Float64Array, cachedTokens: number, blockChars: number): number | undefined {
  const deliveredBlocks = Math.floor((cachedTokens * CHARS_PER_TOKEN) / blockChars);
  return matchedRecencies.length - deliveredBlocks < FEEDBACK_TOLERANCE_BLOCKS ? undefined : matchedRecencies[deliveredBlocks];
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
