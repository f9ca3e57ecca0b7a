import type { BlockHash } from '../../state/block-hash';
import { BlockHashIndex, BlockHashSet } from '../../state/block-hash-index';

/**
 * A set of block hashes with least-recently-used eviction and a fixed capacity. Entries live in preallocated
 * typed arrays (hash by slot, an intrusive doubly linked recency list by slot index, a slot's two links side by
 * side so one cache line holds both) plus one open-addressing index from hash to slot that keeps no second copy
 * of the hash, so memory is bounded by the capacity (8 + 8 + 12 = 28 bytes a block; the arrays are filled
 * in slot order, so pages never used are never mapped) and a touch is O(1) without allocation: fast enough to
 * replay an hour of a 112-instance fleet's prompts.
 */
export class BlockLru {
  private readonly slotOf: BlockHashIndex;
  private readonly hashes: Float64Array;
  /** links[2s]: the slot used just more recently than s (-1 at the head); links[2s + 1]: just less recently. */
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
    if (!Number.isInteger(capacity) || capacity < 0) throw new RangeError(`capacity must be a non-negative integer (got ${capacity})`);
    this.hashes = new Float64Array(capacity);
    this.slotOf = new BlockHashIndex(this.hashes, Math.max(1, capacity));
    this.links = new Int32Array(2 * capacity);
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
   */
  touchSequence(hashes: ArrayLike<BlockHash>): number {
    const keys = this.hashes;
    const links = this.links;
    const evicted = this.evicted;
    let leading = 0;
    let run = true;
    let everLeading = 0;
    let everRun = evicted !== undefined;
    let hint = -1;
    let readAhead = false;
    for (let i = 0; i < hashes.length; i++) {
      const h = hashes[i]!;
      let slot = -1;
      if (this.capacity > 0) slot = hint !== -1 && keys[hint] === h ? hint : this.slotOf.get(h);
      if (slot === -1 && !readAhead && this.capacity > 0) {
        readAhead = true;
        this.readAheadNewBlocks(hashes, i);
      }
      // Read before the move: the slot touched just after this one last time.
      hint = slot === -1 ? -1 : links[2 * slot];
      // Held now, or evicted (possibly by this very sequence): touched before.
      if (everRun) {
        if (slot !== -1 || evicted!.has(h)) everLeading++;
        else everRun = false;
      }
      const present = this.touchAt(h, slot);
      if (run && present) leading++;
      else run = false;
    }
    this.everHeldLeading = everLeading;
    return leading;
  }

  /**
   * From the first absent hash on, a sequence's blocks are mostly new: each costs a probe of the index and of the
   * evicted set, and evicts the least recently used block (a delete from the index, an insert into the set) — at
   * a large fleet's capacity, random reads in hundreds of MB. Reading all those home slots first, with nothing
   * depending on the previous read, lets them miss in parallel; the touches that follow then find them cached.
   */
  private readAheadNewBlocks(hashes: ArrayLike<BlockHash>, from: number): void {
    const index = this.slotOf;
    const evicted = this.evicted;
    for (let i = from; i < hashes.length; i++) {
      index.readAhead(hashes[i]!);
      evicted?.readAhead(hashes[i]!);
    }
    // The blocks these will evict: from the least recently used on.
    const evictions = Math.min(hashes.length - from - (this.capacity - this.used), this.used);
    const links = this.links;
    for (let k = 0, s = this.tail; k < evictions && s !== -1; k++, s = links[2 * s]!) {
      index.readAhead(this.hashes[s]!);
      evicted?.readAhead(this.hashes[s]!);
    }
  }

  /** touch(), given the hash's slot (-1: absent). */
  private touchAt(hash: BlockHash, slot: number): boolean {
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
      this.slotOf.delete(this.hashes[free]!);
      this.evicted?.add(this.hashes[free]!);
    }
    if (this.evicted !== undefined && !this.evicted.has(hash)) this.everHeld++;
    this.hashes[free] = hash;
    this.slotOf.add(hash, free);
    this.pushHead(free);
    return false;
  }

  /** Hashes from most to least recently used (for tests). */
  *recency(): Generator<BlockHash> {
    for (let s = this.head; s !== -1; s = this.links[2 * s + 1]!) yield this.hashes[s]!;
  }

  private unlink(slot: number): void {
    const links = this.links;
    const p = links[2 * slot]!;
    const n = links[2 * slot + 1]!;
    if (p === -1) this.head = n;
    else links[2 * p + 1] = n;
    if (n === -1) this.tail = p;
    else links[2 * n] = p;
  }

  private pushHead(slot: number): void {
    const links = this.links;
    links[2 * slot] = -1;
    links[2 * slot + 1] = this.head;
    if (this.head !== -1) links[2 * this.head] = slot;
    this.head = slot;
    if (this.tail === -1) this.tail = slot;
  }
}
