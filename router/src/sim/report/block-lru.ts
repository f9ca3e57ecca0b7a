import type { BlockHash } from '../../state/block-hash';
import { BlockHashIndex } from '../../state/block-hash-index';

/**
 * A set of block hashes with least-recently-used eviction and a fixed capacity. Entries live in preallocated
 * typed arrays (hash by slot, an intrusive doubly linked recency list by slot index, a slot's two links side by
 * side so one cache line holds both) plus one open-addressing index from hash to slot that keeps no second copy
 * of the hash, so memory is bounded by the capacity (8 + 8 + 8–11 ≈ 27 bytes a block; the arrays are filled
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

  constructor(readonly capacity: number) {
    if (!Number.isInteger(capacity) || capacity < 0) throw new RangeError(`capacity must be a non-negative integer (got ${capacity})`);
    this.hashes = new Float64Array(capacity);
    this.slotOf = new BlockHashIndex(this.hashes, Math.max(1, capacity));
    this.links = new Int32Array(2 * capacity);
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
  touchSequence(hashes: ArrayLike<BlockHash>, from = 0): number {
    if (this.capacity === 0) return 0;
    const keys = this.hashes;
    const links = this.links;
    let leading = 0;
    let run = true;
    let hint = -1;
    for (let i = from; i < hashes.length; i++) {
      const h = hashes[i]!;
      const slot = hint !== -1 && keys[hint] === h ? hint : this.slotOf.get(h);
      // Read before the move: the slot touched just after this one last time.
      hint = slot === -1 ? -1 : links[2 * slot];
      const present = this.touchAt(h, slot);
      if (run && present) leading++;
      else run = false;
    }
    return leading;
  }

  /** touch(), given the hash's slot (-1: absent). */
  private touchAt(hash: BlockHash, slot: number): boolean {
    if (this.capacity === 0) return false;
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
    }
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
