import type { BlockHash } from './block-hash';

const NONE = -1;

/**
 * Slots for `entries` at a load factor of at most 2/3 (any integer, at least 8: no power-of-two slack). The KV
 * pools and the fleet LRU stay full, so every eviction deletes at that load, and a backward-shift delete scans
 * to the end of its run: with linear probing that is ½(1 + 1/(1 − load)²) slots on average, 5 at 2/3 against
 * 8.5 at 3/4, for 1.3 more bytes an entry.
 */
export function slotCountFor(entries: number): number {
  return Math.max(8, Math.ceil((entries * 3) / 2));
}

/**
 * An index from block hash to block id for structures that already keep each block's hash in an array by id
 * (the KV pool, the fleet LRU): the index stores no second copy of the 53-bit key. A slot is two 32-bit
 * words, the key's low 32 bits and id + 1 (0 = empty, so a new table needs no initialization and the
 * operating system maps its pages only as they are written); a low-bits match is confirmed against
 * `keys[id]`. Open addressing with linear probing (eight slots per 64-byte cache line, so a probe run usually
 * costs one cache miss there, one more for the confirming key), backward-shift deletion (no tombstones). The
 * table is sized for `maxEntries` at a load factor of 2/3 exactly (any size: a slot's home is the Fibonacci
 * product of the low word scaled to the table), so 8 bytes per slot are 12 bytes per entry at capacity.
 * Lookups allocate nothing.
 */
export class BlockHashIndex {
  private readonly slots: Int32Array;
  /** Number of slots. */
  private readonly n: number;
  private count = 0;
  readonly maxEntries: number;
  /** Where readAhead leaves the words it read, so the reads are not optimized away (meaningless otherwise). */
  readAheadSum = 0;

  /**
   * @param keys the owner's hash-by-id array: while id is in the index, `keys[id * keyStride]` is its hash
   * @param maxEntries most entries held at once (inserting beyond it throws: the owner sized it wrong)
   * @param keyStride elements from one id's key to the next: an owner that keeps each block's hash in one record
   * with its other fields (one cache line read per block, not one per array) passes the record's size in 8-byte words
   */
  constructor(
    private readonly keys: Float64Array,
    maxEntries: number,
    private readonly keyStride = 1,
  ) {
    if (!Number.isInteger(keyStride) || keyStride < 1)
      throw new RangeError(`keyStride must be an integer >= 1, got ${keyStride}`);
    if (!Number.isInteger(maxEntries) || maxEntries < 1)
      throw new RangeError(`maxEntries must be an integer >= 1, got ${maxEntries}`);
    if (maxEntries > 0x7ffffffe) throw new RangeError(`maxEntries must be at most ${0x7ffffffe}, got ${maxEntries}`);
    this.maxEntries = maxEntries;
    const slots = slotCountFor(maxEntries);
    this.n = slots;
    this.slots = new Int32Array(slots * 2);
  }

  get size(): number {
    return this.count;
  }

  /** The id stored for `hash`, or -1. */
  get(hash: BlockHash): number {
    const i = this.probe(hash);
    return i >= 0 ? this.slots[2 * i + 1] - 1 : NONE;
  }

  has(hash: BlockHash): boolean {
    return this.probe(hash) >= 0;
  }

  /**
   * Reads `hash`'s home slot, nothing else: a caller about to look up, insert or delete many hashes reads all
   * their homes first, in a loop where no read depends on another, so the processor fetches the cache lines in
   * parallel instead of waiting for one miss after another. Worth it for tables larger than the CPU's caches.
   */
  readAhead(hash: BlockHash): void {
    this.readAheadSum += this.slots[2 * homeOf(hash | 0, this.n) + 1];
  }

  /**
   * Stores `id` for `hash` unless the hash is present; one probe run for check and insert. The caller sets
   * `keys[id] = hash` (before or after: the probe never reads the new id's key). Returns whether it stored.
   */
  add(hash: BlockHash, id: number): boolean {
    const i = this.probe(hash);
    if (i >= 0) return false;
    if (this.count >= this.maxEntries) throw new RangeError(`block hash index is full (${this.maxEntries} entries)`);
    this.slots[2 * ~i] = hash | 0;
    this.slots[2 * ~i + 1] = id + 1;
    this.count++;
    return true;
  }

  /** Removes `hash` (its key must still be in `keys`); returns whether it was present. */
  delete(hash: BlockHash): boolean {
    const i = this.probe(hash);
    if (i < 0) return false;
    const slots = this.slots;
    const n = this.n;
    // Backward shift: pull later entries of the probe run into the hole so lookups never stop early.
    let hole = i;
    for (let j = i + 1 === n ? 0 : i + 1; slots[2 * j + 1] !== 0; j = j + 1 === n ? 0 : j + 1) {
      const home = homeOf(slots[2 * j], n);
      // Leave j where it is when its home lies cyclically in (hole, j].
      const homeInRange = hole <= j ? hole < home && home <= j : hole < home || home <= j;
      if (homeInRange) continue;
      slots[2 * hole] = slots[2 * j];
      slots[2 * hole + 1] = slots[2 * j + 1];
      hole = j;
    }
    slots[2 * hole] = 0;
    slots[2 * hole + 1] = 0;
    this.count--;
    return true;
  }

  /**
   * The slot holding `hash`, or, when absent, ~(the empty slot that ends its probe run: where it would go).
   * A low-word match is confirmed against the owner's key.
   */
  private probe(hash: BlockHash): number {
    const lo = hash | 0;
    const slots = this.slots;
    const keys = this.keys;
    const stride = this.keyStride;
    const n = this.n;
    for (let i = homeOf(lo, n); ; i = i + 1 === n ? 0 : i + 1) {
      const stored = slots[2 * i + 1];
      if (stored === 0) return ~i;
      if (slots[2 * i] === lo && keys[(stored - 1) * stride] === hash) return i;
    }
  }

  /** Every (hash, id) pair, in slot order (for invariant checks). */
  *entries(): IterableIterator<[BlockHash, number]> {
    for (let i = 0; i < this.n; i++) {
      const stored = this.slots[2 * i + 1];
      if (stored !== 0) yield [this.keys[(stored - 1) * this.keyStride], stored - 1];
    }
  }
}

/** Growth factor of a BlockHashSet shard: 1.5 rather than 2 bounds the slack after a growth. */
const SET_GROWTH = 1.5;
/** Largest load factor of a shard before it grows (linear probing stays short up to about 0.8). */
const SET_MAX_LOAD = 0.75;
/** Shards of a BlockHashSet: each grows on its own, so a growth briefly holds 1/64 of the set twice, not all of it. */
const SET_SHARDS = 64;

/**
 * A growable set of block hashes (what the fleet ceiling's LRU evicted): 64 shards by the hash's high bits,
 * each an open-addressing table of the keys themselves in one Float64Array, stored as hash + 1 so that 0
 * marks an empty slot (exact: hashes are below 2^53), linear probing, load factor ≤ 3/4, growing by 1.5×. A
 * table's size is any integer (a slot's home is the top of the hash's Fibonacci product scaled to the size).
 * 8 bytes per slot, 10.7–16 bytes per entry, and a growth never holds more than one shard twice. Nothing is
 * ever removed.
 */
export class BlockHashSet {
  private readonly shards: Float64Array[] = [];
  private readonly limits: number[] = [];
  private count = 0;
  /** Where readAhead leaves the words it read (see BlockHashIndex.readAhead). */
  readAheadSum = 0;

  constructor(initialEntries = 1 << 16) {
    if (!Number.isInteger(initialEntries) || initialEntries < 1)
      throw new RangeError(`initialEntries must be an integer >= 1, got ${initialEntries}`);
    const slots = Math.max(8, Math.ceil(initialEntries / SET_SHARDS / SET_MAX_LOAD));
    for (let k = 0; k < SET_SHARDS; k++) {
      this.shards.push(new Float64Array(slots));
      this.limits.push(Math.floor(slots * SET_MAX_LOAD));
    }
  }

  get size(): number {
    return this.count;
  }

  has(hash: BlockHash): boolean {
    const stored = hash + 1;
    const slots = this.shards[shardOf(hash)];
    const n = slots.length;
    for (let i = homeOf(hash, n); ; i = i + 1 === n ? 0 : i + 1) {
      const s = slots[i];
      if (s === stored) return true;
      if (s === 0) return false;
    }
  }

  /** Reads `hash`'s home slot, nothing else (see BlockHashIndex.readAhead). */
  readAhead(hash: BlockHash): void {
    const slots = this.shards[shardOf(hash)];
    this.readAheadSum += slots[homeOf(hash, slots.length)];
  }

  /** Adds `hash`; returns whether it was absent. */
  add(hash: BlockHash): boolean {
    if (!(hash >= 0 && hash <= Number.MAX_SAFE_INTEGER))
      throw new RangeError(`block hashes must be integers in [0, 2^53 - 1], got ${hash}`);
    const stored = hash + 1;
    const shard = shardOf(hash);
    const slots = this.shards[shard];
    const n = slots.length;
    for (let i = homeOf(hash, n); ; i = i + 1 === n ? 0 : i + 1) {
      const s = slots[i];
      if (s === stored) return false;
      if (s === 0) {
        slots[i] = stored;
        this.count++;
        if (--this.limits[shard] < 0) this.grow(shard);
        return true;
      }
    }
  }

  private grow(shard: number): void {
    const old = this.shards[shard];
    const n = Math.ceil(old.length * SET_GROWTH);
    if (n > 2 ** 31) throw new RangeError(`block hash set shard cannot grow beyond ${old.length} slots`);
    const slots = new Float64Array(n);
    let entries = 0;
    for (let k = 0; k < old.length; k++) {
      const stored = old[k];
      if (stored === 0) continue;
      let i = homeOf(stored - 1, n);
      while (slots[i] !== 0) i = i + 1 === n ? 0 : i + 1;
      slots[i] = stored;
      entries++;
    }
    this.shards[shard] = slots;
    this.limits[shard] = Math.floor(n * SET_MAX_LOAD) - entries;
  }
}

/** Shard of `hash`: low bits of its high part (the home within a shard comes from the low word). */
function shardOf(hash: BlockHash): number {
  return Math.floor(hash / 4294967296) & (SET_SHARDS - 1);
}

/** Home slot of `hash` in a table of `n` slots: the Fibonacci product of its low word (lo × 2^32/φ), scaled to [0, n). */
function homeOf(hash: BlockHash, n: number): number {
  const i = Math.floor(((Math.imul(hash | 0, 0x9e3779b1) >>> 0) / 4294967296) * n);
  return i < n ? i : n - 1;
}
