import type { BlockHash } from '../state/block-hash';
import { BlockHashIndex, BlockHashSet } from '../state/block-hash-index';

/** A slot's record: its hash (8 bytes), then its two recency links (4 bytes each). */
const RECORD_BYTES = 16;

/**
 * A set of block hashes with least-recently-used eviction and a fixed capacity. Entries live in one
 * preallocated record array (by slot, 16 bytes: the hash, then an intrusive doubly linked recency list's two
 * links, so following the list or confirming a slot's hash reads one cache line per block) plus one
 * open-addressing index from hash to slot that keeps no second copy of the hash, so memory is bounded by the
 * capacity (16 + 12 = 28 bytes a block; records are filled in slot order, so pages never used are never
 * mapped) and a touch is O(1) without allocation: fast enough to replay an hour of a 112-instance fleet's
 * prompts.
 */
export class BlockLru {
  private readonly slotOf: BlockHashIndex;
  /** hashes[2s]: slot s's hash (the record's first 8 bytes). */
  private readonly hashes: Float64Array;
  /**
   * The same records as 32-bit words: links[4s + 2] is the slot used just more recently than s (-1 at the head),
   * links[4s + 3] the one just less recently.
   */
  private readonly links: Int32Array;
  /** Most recently used slot, or -1. */
  private head = -1;
  /** Least recently used slot, or -1. */
  private tail = -1;
  private used = 0;
  /** With `rememberEvicted`: every hash this LRU ever evicted (or, at capacity 0, was ever given). */
  private readonly evicted: BlockHashSet | undefined;
  private everHeldLeading = 0;
  private everHeld = 0;

  /**
   * @param rememberEvicted also remember every hash ever evicted, so `touchSequence` can tell whether a hash
   * was ever held: the hashes held now plus those evicted are every hash ever touched, so the set need hold only
   * the evicted ones.
   */
  constructor(
    readonly capacity: number,
    rememberEvicted = false,
  ) {
    if (!Number.isInteger(capacity) || capacity < 0)
      throw new RangeError(`capacity must be a non-negative integer (got ${capacity})`);
    const records = new ArrayBuffer(RECORD_BYTES * capacity);
    this.hashes = new Float64Array(records);
    this.links = new Int32Array(records);
    this.slotOf = new BlockHashIndex(this.hashes, Math.max(1, capacity), RECORD_BYTES / Float64Array.BYTES_PER_ELEMENT);
    this.evicted = rememberEvicted ? new BlockHashSet(1 << 16) : undefined;
  }

  /** Distinct hashes ever touched (needs rememberEvicted). */
  get everHeldCount(): number {
    return this.everHeld;
  }

  /** Of the last `touchSequence`: how many leading hashes had been touched before, ever (needs rememberEvicted). */
  get lastEverHeldLeading(): number {
    return this.everHeldLeading;
  }

  get size(): number {
    return this.used;
  }

  has(hash: BlockHash): boolean {
    return this.slotOf.has(hash);
  }

  /**
   * Mark `hash` most recently used, inserting it (and evicting the least recently used) if absent. Returns
   * whether it was present.
   */
  touch(hash: BlockHash): boolean {
    return this.touchAt(hash, this.capacity === 0 ? -1 : this.slotOf.get(hash));
  }

  /**
   * Touches `hashes` in order; returns how many leading ones were present. A prompt's blocks were last touched
   * in the same order, so each block's slot is usually the one used just more recently than its predecessor's:
   * that slot is tried first (its hash confirms it) before the index is probed, saving most index lookups.
   *
   * The hashes must be chained, as blockHashes makes them (a block's hash covers all blocks before it): then,
   * with rememberEvicted, once a hash was never touched before, none after it was either, so the rest of the
   * sequence is inserted without looking for it in the index or the evicted set.
   */
  touchSequence(hashes: ArrayLike<BlockHash>): number {
    const keys = this.hashes;
    const links = this.links;
    const evicted = this.evicted;
    let leading = 0;
    let run = true;
    let everLeading = 0;
    let everRun = evicted !== undefined;
    let neverTouched = false;
    let hint = -1;
    let readAhead = false;
    for (let i = 0; i < hashes.length; i++) {
      const h = hashes[i];
      let slot = -1;
      if (this.capacity > 0 && !neverTouched) slot = hint !== -1 && keys[2 * hint] === h ? hint : this.slotOf.get(h);
      if (slot === -1 && !readAhead && this.capacity > 0) {
        readAhead = true;
        this.readAheadNewBlocks(hashes, i);
      }
      // Read before the move: the slot touched just after this one last time.
      hint = slot === -1 ? -1 : links[4 * slot + 2];
      // Held now, or evicted (possibly by this very sequence): touched before.
      if (everRun) {
        if (slot !== -1 || evicted!.has(h)) everLeading++;
        else everRun = false;
        neverTouched = !everRun;
      }
      const present = this.touchAt(h, slot, neverTouched);
      if (run && present) leading++;
      else run = false;
    }
    this.everHeldLeading = everLeading;
    return leading;
  }

  /**
   * From the first absent hash on, a sequence's blocks are mostly new: each costs a probe of the index, and
   * evicts the least recently used block (a delete from the index, an insert into the evicted set) — at a large
   * fleet's capacity, random reads in hundreds of MB. Reading all those home slots first, with nothing depending
   * on the previous read, lets them miss in parallel; the touches that follow then find them cached. Of the
   * evicted set only the first absent hash is looked up, as a rule (see touchSequence).
   */
  private readAheadNewBlocks(hashes: ArrayLike<BlockHash>, from: number): void {
    const index = this.slotOf;
    const evicted = this.evicted;
    evicted?.readAhead(hashes[from]);
    for (let i = from; i < hashes.length; i++) index.readAhead(hashes[i]);
    // The blocks these will evict: from the least recently used on.
    const evictions = Math.min(hashes.length - from - (this.capacity - this.used), this.used);
    const links = this.links;
    for (let k = 0, s = this.tail; k < evictions && s !== -1; k++, s = links[4 * s + 2]!) {
      index.readAhead(this.hashes[2 * s]);
      evicted?.readAhead(this.hashes[2 * s]);
    }
  }

  /** touch(), given the hash's slot (-1: absent); `neverTouched`: the caller knows it is new to the evicted set too. */
  private touchAt(hash: BlockHash, slot: number, neverTouched = false): boolean {
    if (this.capacity === 0) {
      // Evicted as soon as given.
      if (this.evicted?.add(hash)) this.everHeld++;
      return false;
    }
    if (slot !== -1) {
      if (slot !== this.head) {
        this.unlink(slot);
        this.pushHead(slot);
      }
      return true;
    }
    let free: number;
    if (this.used < this.capacity) {
      free = this.used++;
    } else {
      free = this.tail;
      this.unlink(free);
      this.slotOf.delete(this.hashes[2 * free]);
      this.evicted?.add(this.hashes[2 * free]);
    }
    if (this.evicted !== undefined && (neverTouched || !this.evicted.has(hash))) this.everHeld++;
    this.hashes[2 * free] = hash;
    this.slotOf.add(hash, free);
    this.pushHead(free);
    return false;
  }

  /** Hashes from most to least recently used (for tests). */
  *recency(): Generator<BlockHash> {
    for (let s = this.head; s !== -1; s = this.links[4 * s + 3]!) yield this.hashes[2 * s];
  }

  private unlink(slot: number): void {
    const links = this.links;
    const p = links[4 * slot + 2];
    const n = links[4 * slot + 3];
    if (p === -1) this.head = n;
    else links[4 * p + 3] = n;
    if (n === -1) this.tail = p;
    else links[4 * n + 2] = p;
  }

  private pushHead(slot: number): void {
    const links = this.links;
    links[4 * slot + 2] = -1;
    links[4 * slot + 3] = this.head;
    if (this.head !== -1) links[4 * this.head + 2] = slot;
    this.head = slot;
    if (this.tail === -1) this.tail = slot;
  }
}
