import { NO_SLOT, SlotList } from '../common/slot-list';
import type { BlockHash } from './block-hash';
import { BlockHashIndex } from './block-hash-index';

const NONE = -1;

/**
 * A fixed pool of KV-cache blocks with a prefix cache, as vLLM's block pool manages it:
 *
 * - a block is either referenced (held by one or more running requests: pinned, never evicted) or free;
 * - a full block may carry a hash and then sits in the hash → block map, so later requests can reuse it;
 * - free blocks wait in one queue ordered least recently used first; `allocate` takes the head and, if that
 *   block still carried a hash, evicts it from the map. Released blocks with a hash join the tail (they stay
 *   cached as long as possible); released blocks without one join the head (nothing is lost reusing them).
 *
 * Everything is O(1) per block: typed arrays for reference counts, hashes and a doubly linked free queue
 * (common/slot-list.ts),
 * and an open-addressing index from hash to block id that keeps no second copy of the hash. A block costs
 * 4 (references) + 8 (hash) + 8 (links) + 4 (successor hint) + 12 (index) = 36 bytes. No allocation per
 * block after construction.
 */
export class KvBlockPool {
  readonly capacity: number;
  private readonly refCounts: Int32Array;
  private readonly hashes: Float64Array;
  /** Free blocks, least recently used first. */
  private readonly freeQueue: SlotList;
  /**
   * successor[id]: the block that followed block id the last time a prompt matched through it (a hint, -1 if
   * none). A shared prefix's blocks are matched in the same order again and again, so matchPrefix follows the
   * hint and confirms it by the block's own hash — one read near the last, where the index would cost a
   * random probe per block (a cache miss once a large fleet's pools outgrow the CPU's caches). A pool never
   * holds one hash twice (register), so a confirmed hint is the block the index would return.
   */
  private readonly successor: Int32Array;
  private readonly byHash: BlockHashIndex;
  private evictionCount = 0;

  /**
   * @param onEvict hears each cached hash `allocate` evicts (the emulator publishes them as vLLM's BlockRemoved);
   *   unset in simulations, where it costs one check per eviction.
   */
  constructor(
    capacity: number,
    private readonly onEvict?: (hash: BlockHash) => void,
  ) {
    if (!Number.isInteger(capacity) || capacity < 1)
      throw new RangeError(`KV pool capacity must be an integer >= 1, got ${capacity}`);
    this.capacity = capacity;
    this.refCounts = new Int32Array(capacity);
    this.hashes = new Float64Array(capacity).fill(NONE);
    this.freeQueue = new SlotList(capacity);
    this.successor = new Int32Array(capacity).fill(NONE);
    this.byHash = new BlockHashIndex(this.hashes, capacity);
    for (let id = 0; id < capacity; id++) this.freeQueue.pushTail(id);
  }

  /** Blocks no request references: never used, or cached and evictable. */
  get freeBlocks(): number {
    return this.freeQueue.size;
  }

  /** Blocks referenced by at least one request. */
  get usedBlocks(): number {
    return this.capacity - this.freeQueue.size;
  }

  /** Blocks that carry a hash (referenced or not). */
  get cachedBlocks(): number {
    return this.byHash.size;
  }

  /** Cached blocks evicted so far to make room. */
  get evictions(): number {
    return this.evictionCount;
  }

  /**
   * How many of the leading `hashes` (at most `maxBlocks`) are cached, stopping at the first miss. With
   * `idsOut`, also writes the matched block ids there, so admission needs one lookup per block.
   */
  matchPrefix(hashes: ArrayLike<BlockHash>, maxBlocks: number, idsOut?: Int32Array): number {
    const limit = Math.min(maxBlocks, hashes.length);
    const successor = this.successor;
    let matched = 0;
    let previous = NONE;
    for (; matched < limit; matched++) {
      const hash = hashes[matched];
      const hinted = previous === NONE ? NONE : successor[previous];
      const id = hinted !== NONE && this.hashes[hinted] === hash ? hinted : this.byHash.get(hash);
      if (id === NONE) break;
      if (previous !== NONE && hinted !== id) successor[previous] = id;
      if (idsOut) idsOut[matched] = id;
      previous = id;
    }
    return matched;
  }

  /** How many of `ids[0..count)` are unreferenced (would leave the free queue when acquired). */
  unreferencedAmong(ids: Int32Array, count: number): number {
    let unreferenced = 0;
    for (let i = 0; i < count; i++) if (this.refCounts[ids[i]] === 0) unreferenced++;
    return unreferenced;
  }

  /** Takes a reference on a cached block by id (from `matchPrefix`'s `idsOut`, in the same admission). */
  acquire(id: number): number {
    if (this.refCounts[id] === 0) this.freeQueue.unlink(id);
    this.refCounts[id]++;
    return id;
  }

  /** Of the first `count` hashes (all cached), how many sit unreferenced in the free queue. */
  countUnreferenced(hashes: ArrayLike<BlockHash>, count: number): number {
    let unreferenced = 0;
    for (let i = 0; i < count; i++) {
      const id = this.byHash.get(hashes[i]);
      if (id !== NONE && this.refCounts[id] === 0) unreferenced++;
    }
    return unreferenced;
  }

  /** Takes a reference on the cached block with this hash (leaving the free queue if it was free). */
  acquireCached(hash: BlockHash): number {
    const id = this.byHash.get(hash);
    if (id === NONE) throw new Error(`block hash ${hash} is not cached`);
    if (this.refCounts[id] === 0) this.freeQueue.unlink(id);
    this.refCounts[id]++;
    return id;
  }

  /**
   * Before `count` allocations: reads the index's home slots of the hashes they will evict (the next `count` free
   * blocks) ahead, so their cache misses overlap (BlockHashIndex.readAhead). Worth it for many blocks at once (a
   * prompt's) in a pool larger than the caches (a large fleet's).
   */
  readAheadEvictions(count: number): void {
    const freeQueue = this.freeQueue;
    for (let k = 0, id = freeQueue.head; k < count && id !== NO_SLOT; k++, id = freeQueue.next(id)) {
      const hash = this.hashes[id];
      if (hash !== NONE) this.byHash.readAhead(hash);
    }
  }

  /** Before registering `hashes[from..to)`: reads their home slots ahead (as readAheadEvictions). */
  readAheadRegistrations(hashes: ArrayLike<BlockHash>, from: number, to: number): void {
    for (let i = from; i < to; i++) this.byHash.readAhead(hashes[i]);
  }

  /** A block for new tokens: the least recently used free block, evicting its hash if it had one. */
  allocate(): number {
    const id = this.freeQueue.popHead();
    if (id === NO_SLOT) throw new Error('KV pool exhausted: check freeBlocks before allocating');
    const hash = this.hashes[id];
    if (hash !== NONE) {
      this.byHash.delete(hash);
      this.hashes[id] = NONE;
      this.evictionCount++;
      if (this.onEvict !== undefined) this.onEvict(hash);
    }
    this.refCounts[id] = 1;
    return id;
  }

  /**
   * Marks a referenced, full block as holding the content with this hash so later requests can reuse it.
   * Returns false (and leaves the block unhashed) when another block already holds that content.
   */
  register(id: number, hash: BlockHash): boolean {
    if (this.hashes[id] !== NONE || !this.byHash.add(hash, id)) return false;
    this.hashes[id] = hash;
    return true;
  }

  /**
   * Drops one reference on each of `ids[0..count)`, last block first, so a request's tail blocks are evicted
   * before its prefix blocks (the prefix is the part other requests are likely to share).
   */
  release(ids: readonly number[], count = ids.length): void {
    for (let i = count - 1; i >= 0; i--) {
      const id = ids[i];
      const refs = --this.refCounts[id];
      if (refs > 0) continue;
      if (refs < 0) throw new Error(`block ${id} released more often than acquired`);
      if (this.hashes[id] !== NONE) this.freeQueue.pushTail(id);
      else this.freeQueue.pushHead(id);
    }
  }

  /**
   * Forgets every cached hash, as vLLM's `BlockPool.reset_prefix_cache` does (vllm/v1/core/block_pool.py at
   * vllm-project/vllm@002f3491): only when no request holds a block, else nothing changes and it returns false.
   * Not counted as evictions.
   */
  resetPrefixCache(): boolean {
    if (this.freeQueue.size !== this.capacity) return false;
    for (let id = 0; id < this.capacity; id++) {
      const hash = this.hashes[id];
      if (hash === NONE) continue;
      this.byHash.delete(hash);
      this.hashes[id] = NONE;
    }
    this.successor.fill(NONE);
    return true;
  }

  /** Hashes of the free cached blocks, next eviction first (for tests and debugging). */
  evictionOrder(): BlockHash[] {
    const order: BlockHash[] = [];
    for (let id = this.freeQueue.head; id !== NO_SLOT; id = this.freeQueue.next(id))
      if (this.hashes[id] !== NONE) order.push(this.hashes[id]);
    return order;
  }

  /** Reference count of the block holding this hash (0 if free, undefined if not cached). */
  referencesOf(hash: BlockHash): number | undefined {
    const id = this.byHash.get(hash);
    return id === NONE ? undefined : this.refCounts[id];
  }

  /** Throws if internal structures disagree; `expectedRefs[id]` is what callers believe they hold. */
  checkInvariants(expectedRefs?: ArrayLike<number>): void {
    this.freeQueue.checkLinks();
    const free = this.freeQueue.size;
    for (let id = this.freeQueue.head; id !== NO_SLOT; id = this.freeQueue.next(id))
      if (this.refCounts[id] !== 0)
        throw new Error(`block ${id} is in the free queue with ${this.refCounts[id]} references`);
    let referenced = 0;
    for (let id = 0; id < this.capacity; id++) {
      if (this.refCounts[id] < 0) throw new Error(`block ${id} has negative references`);
      if (this.refCounts[id] > 0) referenced++;
      if (expectedRefs && this.refCounts[id] !== expectedRefs[id]) {
        throw new Error(`block ${id} has ${this.refCounts[id]} references, holders account for ${expectedRefs[id]}`);
      }
      const hash = this.hashes[id];
      if (hash !== NONE && this.byHash.get(hash) !== id) throw new Error(`block ${id} hash is not mapped back to it`);
    }
    if (referenced + free !== this.capacity) throw new Error('referenced + free blocks != capacity');
    for (const [hash, id] of this.byHash.entries())
      if (this.hashes[id] !== hash) throw new Error(`hash ${hash} maps to block ${id} holding another hash`);
  }
}
